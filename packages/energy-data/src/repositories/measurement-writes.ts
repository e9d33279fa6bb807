import type pg from 'pg'
import { type MeasurementsChange, notifyMeasurementsChanged } from './measurement-changes.ts'
import { calendarZone, ROLLUP_LOCK, refreshRollups } from './rollups.ts'

/**
 * The one write path's end: whoever writes quarter hours (the seed, a CSV import) calls this in
 * its transaction once they are written. It recomputes the rollups of the periods it touched
 * (hours, and the calendar zone's days and months) from the quarter hours themselves, so a rollup
 * never disagrees with its rows, and tells every instance what changed (the window cache's
 * channel), both committed with the rows or not at all.
 *
 * Two writers into one hour: each recomputes under one transaction-scoped lock, taken after its
 * rows are written and held until it commits, and reads (READ COMMITTED: a snapshot per
 * statement) after taking it. Whichever commits last has recomputed with the other's rows.
 */
export async function measurementsWritten(client: pg.PoolClient, change: MeasurementsChange): Promise<void> {
  if (change.tables.length === 0 || !(change.toMs > change.fromMs)) return
  await client.query('select pg_advisory_xact_lock($1)', [ROLLUP_LOCK])
  const zone = await calendarZone(client)
  for (const table of change.tables) await refreshRollups(client, table, change.fromMs, change.toMs, zone)
  await notifyMeasurementsChanged(client, change)
}
