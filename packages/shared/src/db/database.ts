import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { PreparingClient } from './prepared.ts'

/** Same JavaScript values whatever the server: int8 and numeric become numbers, not strings. */
const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) {
      return (value: string) => Number(value)
    }
    return pg.types.getTypeParser(oid, format)
  },
}

export interface Database<DB> {
  readonly db: Kysely<DB>
  readonly pool: pg.Pool
  readonly url: string
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** Pool size; the embedded server serialises transactions, so a few connections are plenty there. */
  max?: number
  /** Milliseconds to wait for a connection before failing (readiness must not hang on a dead server). */
  connectionTimeoutMillis?: number
  statementTimeoutMillis?: number
  applicationName?: string
  onError?: (error: Error) => void
}

/** The one database factory: a pg pool through kysely, whatever serves the URL (PostgreSQL or embedded PGlite). */
export function createDatabase<DB>(url: string, options: DatabaseOptions = {}): Database<DB> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5000,
    idleTimeoutMillis: 30_000,
    application_name: options.applicationName,
    statement_timeout: options.statementTimeoutMillis,
    types: typeParsers,
    // statements planned once per connection (prepared.ts)
    Client: PreparingClient,
  })
  // A connection dropped while idle emits here; without a listener it would crash the process.
  pool.on('error', (error) => options.onError?.(error))
  // ...and so does a connection that drops while checked out between two queries; the
  // query in flight (if any) is rejected on its own, so here it is only reported.
  pool.on('connect', (client) => client.on('error', (error) => options.onError?.(error)))
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) })
  let closed: Promise<void> | undefined
  return {
    db,
    pool,
    url,
    close: () => {
      closed ??= db.destroy()
      return closed
    },
  }
}

/** Host and port of a URL for log lines, never its password. */
export function describeUrl(url: string): string {
  const u = new URL(url)
  return `${u.hostname}:${u.port || 5432}${u.pathname}`
}
