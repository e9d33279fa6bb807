import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../src/db/database.ts'
import type { EmbeddedPostgres } from '../src/db/embedded-server.ts'
import { startEmptyEmbeddedPostgres } from '../src/testing/database.ts'

describe('embedded PGlite served over the wire protocol', () => {
  let server: EmbeddedPostgres
  let database: Database<{ counter: { id: number; n: number } }>

  beforeAll(async () => {
    server = await startEmptyEmbeddedPostgres()
    database = createDatabase(server.url, { max: 6 })
    await sql`create table counter (id int primary key, n int not null)`.execute(database.db)
    await sql`insert into counter values (1, 0)`.execute(database.db)
  })
  afterAll(async () => {
    await database.close()
    await server.close()
  })

  it('keeps concurrent transactions from several connections isolated and whole', async () => {
    // read-modify-write from 30 transactions at once: lost updates would show as n < 30
    await Promise.all(
      Array.from({ length: 30 }, () =>
        database.db.transaction().execute(async (trx) => {
          const row = await trx.selectFrom('counter').select('n').where('id', '=', 1).executeTakeFirstOrThrow()
          await trx
            .updateTable('counter')
            .set({ n: row.n + 1 })
            .where('id', '=', 1)
            .execute()
        }),
      ),
    )
    const row = await database.db.selectFrom('counter').select('n').where('id', '=', 1).executeTakeFirstOrThrow()
    expect(row.n).toBe(30)
  })

  it('rolls back what a failed transaction wrote', async () => {
    await expect(
      database.db.transaction().execute(async (trx) => {
        await trx.insertInto('counter').values({ id: 2, n: 5 }).execute()
        throw new Error('abort')
      }),
    ).rejects.toThrow('abort')
    expect(await database.db.selectFrom('counter').selectAll().where('id', '=', 2).execute()).toEqual([])
  })

  it('returns int8 and numeric as numbers, like the PostgreSQL server path', async () => {
    const result = await sql<{ c: number; s: number }>`select count(*) as c, 1.5::numeric as s from counter`.execute(
      database.db,
    )
    expect(result.rows[0]).toEqual({ c: 1, s: 1.5 })
  })

  it('serves a cursor in batches; queries from other connections wait for its transaction and then run', async () => {
    const client = await database.pool.connect()
    const seen: number[] = []
    let other: Promise<unknown[]> | undefined
    try {
      await client.query('begin isolation level repeatable read read only')
      await client.query('declare rows_cursor no scroll cursor for select g from generate_series(1, 2500) g order by g')
      for (;;) {
        const batch = await client.query<{ g: number }>('fetch 1000 from rows_cursor')
        if (batch.rows.length === 0) break
        seen.push(batch.rows.length, batch.rows[0]?.g ?? -1)
        // The embedded server runs one transaction at a time: this query waits for the cursor's.
        other ??= database.db.selectFrom('counter').select('n').execute()
        if (batch.rows.length < 1000) break
      }
      await client.query('commit')
    } finally {
      client.release()
    }
    expect(seen).toEqual([1000, 1, 1000, 1001, 500, 2001])
    expect(await other).toHaveLength(1)
  })

  it('a client that leaves a cursor early rolls back and gets its connection back', async () => {
    const client = await database.pool.connect()
    try {
      await client.query('begin isolation level repeatable read read only')
      await client.query('declare rows_cursor no scroll cursor for select g from generate_series(1, 10000) g')
      const batch = await client.query('fetch 100 from rows_cursor')
      expect(batch.rows).toHaveLength(100)
      await client.query('rollback')
    } finally {
      client.release()
    }
    expect(database.pool.totalCount - database.pool.idleCount).toBe(0)
  })
})
