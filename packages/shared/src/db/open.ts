import { createDatabase, type Database, type DatabaseOptions, describeUrl } from './database.ts'
import { locateEmbedded } from './embedded-host.ts'
import { migrate, pendingMigrations, readMigrations } from './migrator.ts'

export interface ServiceDatabase<DB> extends Database<DB> {
  /** True when served by embedded PGlite rather than a PostgreSQL server. */
  readonly embedded: boolean
  /** One line for logs: where the data lives. */
  readonly description: string
}

/**
 * Opens a service's database: the PostgreSQL server at `url`, or else the embedded PGlite
 * under `<dataDir>/<service>/` (joining the process that serves it, or serving it ourselves).
 */
export async function openServiceDatabase<DB>(options: {
  service: string
  url?: string | undefined
  dataDir: string
  pool?: DatabaseOptions
}): Promise<ServiceDatabase<DB>> {
  if (options.url) {
    const database = createDatabase<DB>(options.url, options.pool)
    return { ...database, embedded: false, description: `PostgreSQL at ${describeUrl(options.url)}` }
  }
  const location = await locateEmbedded(options.dataDir, options.service)
  // a cold embedded start (initdb) can keep the server busy for seconds: wait longer for it
  const database = createDatabase<DB>(location.url, { max: 4, connectionTimeoutMillis: 30_000, ...options.pool })
  const owner = location.host ? 'owned by this process' : 'served by another process'
  return {
    ...database,
    embedded: true,
    description: `embedded PGlite in ${options.dataDir}/${options.service} (${owner})`,
    close: async () => {
      await database.close()
      await location.host?.release()
    },
  }
}

/**
 * Applies pending migrations when allowed (by default only on the embedded database); otherwise
 * refuses, saying which migrations are pending and how to apply them.
 */
export async function ensureMigrated<DB>(
  database: ServiceDatabase<DB>,
  migrationsDir: string,
  allowed: boolean = database.embedded,
): Promise<void> {
  const files = readMigrations(migrationsDir)
  const pending = await pendingMigrations(database.db, files)
  if (!pending.length) return
  if (!allowed) {
    throw new Error(
      `${pending.length} migration(s) pending on ${database.description} (${pending.join(', ')}): ` +
        'run `pnpm db:migrate` or set MIGRATE_ON_START=true',
    )
  }
  await migrate(database.db, files)
}

/**
 * Whether one process serves `database` alone (embedded PGlite, or a test's in-memory PGlite):
 * there is no other instance to tell of a change, and LISTEN/NOTIFY is not relied on there.
 */
export function isEmbedded(database: object): boolean {
  const described = database as { embedded?: boolean; kind?: string }
  return described.embedded === true || described.kind === 'pglite'
}
