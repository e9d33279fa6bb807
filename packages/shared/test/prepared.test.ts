/**
 * Statements with parameters are prepared once per connection on a PostgreSQL server, and a
 * migration that changes a table's columns under a running instance does not break them.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../src/db/database.ts'
import { createTestDatabase, startEmptyEmbeddedPostgres, type TestDatabase } from '../src/testing/database.ts'
import { needsService } from '../src/testing/requirements.ts'

const server = await needsService('prepared statement tests', 'TEST_DATABASE_URL')

describe.runIf(server)('statements prepared on a PostgreSQL server', () => {
  let owner: TestDatabase<unknown>
  /** One connection, so what it prepared can be read back on it. */
  let one: Database<unknown>
  const prepared = async () =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(one.db)).rows.map(
      (r) => r.statement,
    )

  beforeAll(async () => {
    owner = await createTestDatabase<unknown>('prepared', mkdtempSync(join(tmpdir(), 'no-migrations-')))
    one = createDatabase<unknown>(owner.url, { max: 1 })
  })
  afterAll(async () => {
    await one?.close()
    await owner?.close()
  })

  it('names a statement with parameters once, and reuses it', async () => {
    for (const n of [1, 2, 3]) {
      const { rows } = await sql<{ twice: number }>`select ${n}::int * 2 as twice`.execute(one.db)
      expect(rows[0]?.twice).toBe(n * 2)
    }
    const named = (await prepared()).filter((s) => s.includes('* 2 as twice'))
    expect(named).toEqual(['select $1::int * 2 as twice'])
  })

  it("names what pg's own pool.query sends too, config objects included", async () => {
    expect((await one.pool.query('select $1::int + 1 as next', [1])).rows).toEqual([{ next: 2 }])
    const rows = await one.pool.query({ text: 'select $1::int + 2 as later', values: [1], rowMode: 'array' })
    expect(rows.rows).toEqual([[3]])
    const statements = await prepared()
    expect(statements).toContain('select $1::int + 1 as next')
    expect(statements).toContain('select $1::int + 2 as later')
  })

  it('leaves a statement without parameters unnamed', async () => {
    await sql`select 41 + 1 as answer`.execute(one.db)
    expect((await prepared()).some((s) => s.includes('41 + 1'))).toBe(false)
  })

  it('answers with the new columns after a migration adds one to a table it reads', async () => {
    await sql`create table readings (id int primary key, value int)`.execute(one.db)
    await sql`insert into readings values (1, 10)`.execute(one.db)
    const read = () => sql<Record<string, unknown>>`select * from readings where id = ${1}`.execute(one.db)
    expect((await read()).rows).toEqual([{ id: 1, value: 10 }])
    await sql`alter table readings add column unit text not null default 'kWh'`.execute(one.db)
    // the statement prepared before the change can no longer run as it was planned...
    const stale = await one.pool.connect()
    try {
      await expect(
        stale
          .query({ name: 'stale_readings', text: 'select * from readings where id = $1', values: [1] })
          .then(async () => {
            await stale.query('alter table readings add column note text')
            return stale.query({ name: 'stale_readings', text: 'select * from readings where id = $1', values: [1] })
          }),
      ).rejects.toThrow(/cached plan must not change result type/)
    } finally {
      stale.release()
    }
    // ...while the service's own queries go on, with every column
    expect((await read()).rows).toEqual([{ id: 1, value: 10, unit: 'kWh', note: null }])
  })
})

describe('embedded PGlite, one session for every connection', () => {
  it('names nothing, so two connections can run the same statement', async () => {
    const server = await startEmptyEmbeddedPostgres()
    const database = createDatabase<unknown>(server.url, { max: 2 })
    try {
      const twice = () => sql<{ n: number }>`select ${1}::int + 1 as n`.execute(database.db)
      const results = await Promise.all([twice(), twice(), twice(), twice()])
      expect(results.map((r) => r.rows[0]?.n)).toEqual([2, 2, 2, 2])
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(
        database.db,
      )
      expect(rows[0]?.n).toBe(0)
    } finally {
      await database.close()
      await server.close()
    }
  })
})
