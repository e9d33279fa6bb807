import type { CompiledQuery } from 'kysely'
import type pg from 'pg'

/**
 * Rows of a query read in batches from a server-side cursor inside a read-only,
 * repeatable-read transaction: memory stays flat whatever the range, and the rows are
 * one consistent snapshot. The connection is released when iteration ends or stops.
 */
export async function* streamQuery<Row>(
  pool: pg.Pool,
  query: CompiledQuery,
  batchSize = 2000,
): AsyncGenerator<Row[], void, undefined> {
  const client = await pool.connect()
  let broken: unknown
  let finished = false
  try {
    await client.query('begin isolation level repeatable read read only')
    await client.query({ text: `declare rows_cursor no scroll cursor for ${query.sql}`, values: [...query.parameters] })
    while (true) {
      const batch = await client.query<Row & pg.QueryResultRow>(`fetch ${batchSize} from rows_cursor`)
      if (batch.rows.length === 0) break
      yield batch.rows
      if (batch.rows.length < batchSize) break
    }
    await client.query('commit')
    finished = true
  } catch (error) {
    broken = error
    throw error
  } finally {
    if (!finished && broken === undefined) {
      // stopped early by the consumer (client went away): end the transaction, keep the connection
      await client.query('rollback').catch((error: unknown) => {
        broken = error
      })
    }
    // a connection that failed mid-transaction is discarded rather than reused
    client.release(broken instanceof Error ? broken : undefined)
  }
}
