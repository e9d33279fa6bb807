/**
 * `pnpm db:migrate [oauth|energy]`: applies pending migrations to each service's database
 * (its *_DATABASE_URL, or the embedded one). Exits non-zero on any failure.
 */

import Type from 'typebox'
import { loadConfig, runMain } from '../config.ts'
import { migrate, readMigrations } from '../db/migrator.ts'
import { openServiceDatabase } from '../db/open.ts'
import { services } from '../stack/services.ts'

const Config = Type.Object({
  DATA_DIR: Type.String({ default: '.data' }),
  OAUTH_DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  ENERGY_DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
})

runMain(async () => {
  const config = loadConfig(Config)
  const wanted = process.argv.slice(2)
  for (const name of wanted) {
    if (!services.some((s) => s.name === name)) throw new Error(`unknown service "${name}" (use oauth or energy)`)
  }
  const chosen = services.filter((s) => wanted.length === 0 || wanted.includes(s.name))
  const report: Record<string, unknown> = {}
  for (const descriptor of chosen) {
    const url = (config as Record<string, string | undefined>)[descriptor.databaseUrlEnv]
    const database = await openServiceDatabase({ service: descriptor.name, url, dataDir: config.DATA_DIR })
    try {
      const result = await migrate(database.db as never, readMigrations(descriptor.migrationsDir))
      report[descriptor.name] = { database: database.description, ...result }
    } finally {
      await database.close()
    }
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
})
