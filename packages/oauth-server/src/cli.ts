/** `pnpm oauth <command>`: administration of the authorization server. Prints JSON on stdout. */
import { runMain } from '@campus/shared'

const commands: Record<string, (args: string[]) => Promise<unknown>> = {
  // Filled by the first start of `pnpm start`; nothing to prepare yet.
  demo: async () => ({ demo: 'nothing to prepare' }),
}

runMain(async () => {
  const [name, ...args] = process.argv.slice(2)
  const command = name ? commands[name] : undefined
  if (!command) throw new Error(`usage: pnpm oauth <${Object.keys(commands).join('|')}>`)
  const result = await command(args)
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
})
