/**
 * `pnpm demo` (`npm run demo`): prints the "Try it" block of the first start again, with the
 * demo password and API key of the databases in use, from `<DATA_DIR>/demo.json`, and the
 * addresses the running stack announced (else those the configuration gives, saying the stack is
 * not running).
 */
import { runMain, runningStack } from '@campus/shared'
import { loadStackConfig } from './services.ts'
import { demoFile, readDemoDetails, serviceUrls, tryItBlock } from './try-it.ts'

runMain(async () => {
  const config = loadStackConfig()
  const details = readDemoDetails(config)
  if (!details.oauth && !details.energy) {
    throw new Error(
      `no demo details for these databases in ${demoFile(config)}: npm start (or pnpm start) prepares them on its first start`,
    )
  }
  const running = runningStack()
  if (!running) {
    process.stderr.write(
      'The stack is not running: npm start (or pnpm start) starts it. The addresses below are those the configuration gives.\n',
    )
  }
  process.stdout.write(`${tryItBlock(config, details, running?.urls ?? serviceUrls(config))}\n`)
})
