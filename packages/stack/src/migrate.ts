/**
 * `pnpm db:migrate [oauth|energy]`: applies pending migrations to each service's database
 * (its *_DATABASE_URL, or the embedded one). Prints what it did as JSON; exits non-zero on any
 * failure.
 */
import { runMain } from '@campus/shared'
import { openAndMigrate } from './databases.ts'
import { loadStackConfig, services } from './services.ts'

runMain(async () => {
  const config = loadStackConfig()
  const wanted = process.argv.slice(2)
  for (const name of wanted) {
    if (!services.some((s) => s.name === name)) {
      throw new Error(`unknown service "${name}" (use ${services.map((s) => s.name).join(' or ')})`)
    }
  }
  const report: Record<string, unknown> = {}
  for (const descriptor of services.filter((s) => wanted.length === 0 || wanted.includes(s.name))) {
    const { database, result } = await openAndMigrate(descriptor, config)
    await database.close()
    report[descriptor.name] = { database: database.description, ...result }
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
})
