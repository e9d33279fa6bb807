/**
 * `pnpm demo` (`npm run demo`): prints the "Try it" block of the first start again, with the
 * demo password and API key, from `<DATA_DIR>/demo.json`.
 */
import { runMain } from '@campus/shared'
import { loadStackConfig } from './services.ts'
import { demoFile, readDemoDetails, tryItBlock } from './try-it.ts'

runMain(async () => {
  const config = loadStackConfig()
  const details = readDemoDetails(config)
  if (!details.oauth && !details.energy) {
    throw new Error(
      `no demo details in ${demoFile(config)}: npm start (or pnpm start) prepares them on its first start`,
    )
  }
  process.stdout.write(`${tryItBlock(config, details)}\n`)
})
