import { usageError } from '@campus/shared'
import type pg from 'pg'
import { parseInstant } from '../domain/time.ts'
import { measurementsWritten } from '../repositories/measurement-writes.ts'
import { ROLLED_UP_TABLES } from '../repositories/rollups.ts'
import { inTransaction } from '../repositories/transaction.ts'

/**
 * `rollups:refresh --from DATE --to DATE`: the rollups of every table recomputed over a window, for
 * quarter hours written by plain SQL (the write path keeps them for the seed and imports).
 */
export async function refreshRollups(pool: pg.Pool, input: { from?: string | undefined; to?: string | undefined }) {
  const fromMs = input.from === undefined ? undefined : parseInstant(input.from)
  const toMs = input.to === undefined ? undefined : parseInstant(input.to)
  if (fromMs === undefined || toMs === undefined) throw usageError('--from and --to are dates (YYYY-MM-DD or ISO 8601)')
  if (fromMs >= toMs) throw usageError('--from must be before --to')
  const started = Date.now()
  await inTransaction(pool, (client) => measurementsWritten(client, { tables: ROLLED_UP_TABLES, fromMs, toMs }))
  return {
    refreshed: ROLLED_UP_TABLES,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    seconds: (Date.now() - started) / 1000,
  }
}
