/**
 * `pnpm db:migrate [oauth|energy]`: applies pending migrations to each service's database
 * (its *_DATABASE_URL, or the embedded one). Prints what it did as JSON; exits 1 on a failure,
 * 2 on a usage mistake.
 */
import { asksForHelp, EXIT_USAGE, exitAfterOutput, programAsTyped, runMain } from '@campus/shared'
import { openAndMigrate } from './databases.ts'
import { loadStackConfig, services } from './services.ts'

runMain(async () => {
  const wanted = process.argv.slice(2)
  const usage = `usage: ${programAsTyped('pnpm db:migrate')} [${services.map((s) => s.name).join('|')}]...  (every service when none is named)`
  // asked for: the usage on stdout, exit 0; a mistake gets it on stderr, exit 2 (as the service CLIs)
  if (asksForHelp(wanted)) {
    process.stdout.write(`${usage}\n`)
    return exitAfterOutput(0)
  }
  const unknown = wanted.find((name) => !services.some((s) => s.name === name))
  if (unknown !== undefined) {
    process.stderr.write(`error: unknown service "${unknown}"\n${usage}\n`)
    return exitAfterOutput(EXIT_USAGE)
  }
  const config = loadStackConfig()
  const report: Record<string, unknown> = {}
  for (const descriptor of services.filter((s) => wanted.length === 0 || wanted.includes(s.name))) {
    const { database, result } = await openAndMigrate(descriptor, config)
    await database.close()
    report[descriptor.name] = { database: database.description, ...result }
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
})
