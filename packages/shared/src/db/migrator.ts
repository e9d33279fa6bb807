import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Kysely, sql } from 'kysely'

export interface MigrationFile {
  readonly name: string
  readonly checksum: string
  readonly sql: string
}

export interface MigrationResult {
  readonly applied: string[]
  readonly alreadyApplied: number
}

export class MigrationError extends Error {
  override name = 'MigrationError'
}

const NAME = /^\d{4,}[-_][\w-]+\.sql$/
// Serialises migrators of one database (two instances starting together); the number is arbitrary.
const LOCK_KEY = 727_274_001

/** The SQL files of a migrations folder, in order. Names start with a sortable number: `0001_init.sql`. */
export function readMigrations(dir: string): MigrationFile[] {
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
  return names.map((name) => {
    if (!NAME.test(name)) throw new MigrationError(`migration file name ${name} must look like 0001_description.sql`)
    const text = readFileSync(join(dir, name), 'utf8')
    return { name, sql: text, checksum: createHash('sha256').update(text).digest('hex') }
  })
}

async function ensureTable<DB>(db: Kysely<DB>): Promise<void> {
  await sql`create table if not exists schema_migrations (
    name text primary key,
    checksum text not null,
    applied_at timestamptz not null default now()
  )`.execute(db)
}

async function appliedMigrations<DB>(db: Kysely<DB>): Promise<Map<string, string>> {
  const rows = await sql<{ name: string; checksum: string }>`select name, checksum from schema_migrations`.execute(db)
  return new Map(rows.rows.map((r) => [r.name, r.checksum]))
}

/** Names of migrations not yet applied (readiness reports these). Missing table = all pending. */
export async function pendingMigrations<DB>(db: Kysely<DB>, files: MigrationFile[]): Promise<string[]> {
  const exists = await sql<{ t: string | null }>`select to_regclass('schema_migrations')::text as t`.execute(db)
  if (!exists.rows[0]?.t) return files.map((f) => f.name)
  const applied = await appliedMigrations(db)
  return files.filter((f) => !applied.has(f.name)).map((f) => f.name)
}

/**
 * Applies pending migrations in order, each in its own transaction together with its record,
 * so a failing file leaves nothing behind. An applied file whose text changed is an error:
 * migrations are frozen once landed.
 */
export async function migrate<DB>(db: Kysely<DB>, files: MigrationFile[]): Promise<MigrationResult> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${LOCK_KEY})`.execute(conn)
    try {
      await ensureTable(conn)
      const applied = await appliedMigrations(conn)
      for (const file of files) {
        const checksum = applied.get(file.name)
        if (checksum !== undefined && checksum !== file.checksum) {
          throw new MigrationError(`migration ${file.name} was changed after it was applied`)
        }
      }
      const done: string[] = []
      for (const file of files) {
        if (applied.has(file.name)) continue
        try {
          await conn.transaction().execute(async (trx) => {
            await sql.raw(file.sql).execute(trx)
            await sql`insert into schema_migrations (name, checksum) values (${file.name}, ${file.checksum})`.execute(
              trx,
            )
          })
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error)
          throw new MigrationError(`migration ${file.name} failed and was rolled back: ${reason}`)
        }
        done.push(file.name)
      }
      return { applied: done, alreadyApplied: applied.size }
    } finally {
      await sql`select pg_advisory_unlock(${LOCK_KEY})`.execute(conn)
    }
  })
}
