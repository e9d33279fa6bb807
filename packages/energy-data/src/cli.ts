/** `pnpm energy <command>`: administration of the data API. Prints JSON on stdout, errors on stderr. */
import { parseArgs } from 'node:util'
import { ensureMigrated, openServiceDatabase, runMain } from '@campus/shared'
import type { Kysely } from 'kysely'
import type pg from 'pg'
import { GROUP_NAMES, type GroupName } from './catalogue/groups.ts'
import { keyCreate, keyList, keyRevoke, UsageError } from './commands/keys.ts'
import { demo, seed } from './commands/seed.ts'
import { loadEnergyConfig } from './config.ts'
import type { EnergyDatabase } from './db/schema.ts'
import { ImportError, importFiles } from './import/import-csv.ts'
import { energyService } from './service.ts'

interface Context {
  db: Kysely<EnergyDatabase>
  pool: pg.Pool
  args: string[]
  baseUrl: string
}

const log = (line: string) => process.stderr.write(`${line}\n`)

const commands: Record<string, { usage: string; run: (ctx: Context) => Promise<unknown> }> = {
  'key:create': {
    usage: 'key:create --name NAME [--endpoint PATTERN]... [--expires DATE]',
    run: ({ db, args }) => {
      const { values } = parseArgs({
        args,
        options: {
          name: { type: 'string' },
          endpoint: { type: 'string', multiple: true },
          expires: { type: 'string' },
        },
      })
      return keyCreate(db, { name: values.name, endpoints: values.endpoint, expires: values.expires })
    },
  },
  'key:list': {
    usage: 'key:list',
    run: ({ db, args }) => {
      parseArgs({ args, options: {} })
      return keyList(db)
    },
  },
  'key:revoke': {
    usage: 'key:revoke (--id ID | --name NAME)',
    run: ({ db, args }) => {
      const { values } = parseArgs({ args, options: { id: { type: 'string' }, name: { type: 'string' } } })
      return keyRevoke(db, values)
    },
  },
  seed: {
    usage: 'seed [--from DATE] [--to DATE] [--seed N]',
    run: ({ pool, args }) => {
      const { values } = parseArgs({
        args,
        options: { from: { type: 'string' }, to: { type: 'string' }, seed: { type: 'string' } },
      })
      return seed(pool, values, log)
    },
  },
  import: {
    usage: `import FILE... [--group ${GROUP_NAMES.join('|')}]`,
    run: ({ pool, args }) => {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { group: { type: 'string' } },
      })
      if (positionals.length === 0) throw new UsageError('import needs at least one FILE')
      const group = values.group
      if (group !== undefined && !(GROUP_NAMES as string[]).includes(group)) {
        throw new UsageError(`--group must be one of ${GROUP_NAMES.join(', ')}`)
      }
      return importFiles(pool, positionals, { group: group as GroupName | undefined })
    },
  },
  demo: {
    usage: 'demo [--days N]',
    run: ({ db, pool, args, baseUrl }) => {
      const { values } = parseArgs({ args, options: { days: { type: 'string' } } })
      const days = values.days === undefined ? DEMO_DAYS : Number(values.days)
      if (!Number.isInteger(days) || days < 1) throw new UsageError('--days must be a positive integer')
      return demo(db, pool, { days, baseUrl }, log)
    },
  },
}

/** Demo window seeded by `pnpm start` on an empty database. */
const DEMO_DAYS = 400

function usage(): string {
  return `usage: pnpm energy <command>\n${Object.values(commands)
    .map((c) => `  ${c.usage}`)
    .join('\n')}`
}

runMain(async () => {
  const [name, ...args] = process.argv.slice(2)
  const command = name ? commands[name] : undefined
  if (!command) {
    process.stderr.write(`${usage()}\n`)
    process.exit(2)
  }
  const config = loadEnergyConfig()
  const descriptor = energyService
  const database = await openServiceDatabase<EnergyDatabase>({
    service: descriptor.name,
    url: config.ENERGY_DATABASE_URL,
    dataDir: config.DATA_DIR,
  })
  try {
    await ensureMigrated(database as never, descriptor.migrationsDir, config.MIGRATE_ON_START)
    const baseUrl = `http://${config.HOST}:${config.ENERGY_PORT}`
    const result = await command.run({ db: database.db, pool: database.pool, args, baseUrl })
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  } catch (error) {
    if (error instanceof ImportError) {
      process.stderr.write(`${error.message}\n`)
      await database.close()
      process.exit(1)
    }
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(error as Error).message}\n${usage()}\n`)
      await database.close()
      process.exit(2)
    }
    throw error
  } finally {
    await database.close()
  }
})
