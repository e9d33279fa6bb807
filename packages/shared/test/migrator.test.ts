import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../src/db/database.ts'
import { MigrationError, migrate, pendingMigrations, readMigrations } from '../src/db/migrator.ts'
import { createTestDatabase, startEmptyEmbeddedPostgres } from '../src/testing/database.ts'

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

const empty = folder({})

/** Runs the same assertions on the suite's server database and on embedded PGlite. */
const engines: Array<[string, () => Promise<{ database: Database<unknown>; close: () => Promise<void> }>]> = [
  [
    'the test database server',
    async () => {
      const database = await createTestDatabase<unknown>('migrator', empty)
      return { database, close: () => database.close() }
    },
  ],
  [
    'embedded PGlite',
    async () => {
      const server = await startEmptyEmbeddedPostgres()
      const database = createDatabase<unknown>(server.url, { max: 2 })
      return {
        database,
        close: async () => {
          await database.close()
          await server.close()
        },
      }
    },
  ],
]

describe.each(engines)('migrator on %s', (_name, open) => {
  let close: (() => Promise<void>) | undefined
  afterEach(async () => {
    await close?.()
    close = undefined
  })

  async function fresh() {
    const opened = await open()
    close = opened.close
    return opened.database.db
  }

  it('applies files in name order, records them, and is idempotent', async () => {
    const db = await fresh()
    const dir = folder({
      '0002_add_row.sql': "insert into things (name) values ('second');",
      '0001_create.sql':
        "create table things (id serial primary key, name text not null);\ninsert into things (name) values ('first');",
      'README.md': 'not a migration',
    })
    const files = readMigrations(dir)
    expect(await pendingMigrations(db, files)).toEqual(['0001_create.sql', '0002_add_row.sql'])
    expect((await migrate(db, files)).applied).toEqual(['0001_create.sql', '0002_add_row.sql'])
    const second = await migrate(db, files)
    expect(second).toEqual({ applied: [], alreadyApplied: 2 })
    const rows = await sql<{ name: string }>`select name from things order by id`.execute(db)
    expect(rows.rows.map((r) => r.name)).toEqual(['first', 'second'])
    expect(await pendingMigrations(db, files)).toEqual([])
  })

  it('rolls a failing file back whole and stops there', async () => {
    const db = await fresh()
    const dir = folder({
      '0001_ok.sql': 'create table kept (id int);',
      '0002_broken.sql': 'create table half (id int);\ninsert into missing_table values (1);',
      '0003_later.sql': 'create table later (id int);',
    })
    const files = readMigrations(dir)
    await expect(migrate(db, files)).rejects.toThrow(MigrationError)
    await expect(migrate(db, files)).rejects.toThrow(/0002_broken\.sql failed and was rolled back/)
    const tables = await sql<{ t: string | null }>`select to_regclass('kept')::text as t
      union all select to_regclass('half')::text union all select to_regclass('later')::text`.execute(db)
    expect(tables.rows.map((r) => r.t)).toEqual(['kept', null, null])
    expect(await pendingMigrations(db, files)).toEqual(['0002_broken.sql', '0003_later.sql'])
  })

  it('refuses a migration whose text changed after it was applied', async () => {
    const db = await fresh()
    const dir = folder({ '0001_a.sql': 'create table a (id int);' })
    await migrate(db, readMigrations(dir))
    writeFileSync(join(dir, '0001_a.sql'), 'create table a (id bigint);')
    await expect(migrate(db, readMigrations(dir))).rejects.toThrow(
      'migration 0001_a.sql was changed after it was applied',
    )
  })
})

describe('migration file names', () => {
  it('must start with a sortable number', () => {
    expect(() => readMigrations(folder({ 'create.sql': 'select 1' }))).toThrow(/must look like 0001_description\.sql/)
  })
})
