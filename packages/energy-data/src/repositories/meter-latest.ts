import { type Kysely, sql } from 'kysely'
import type { EnergyDatabase } from '../db/schema.ts'

/** Where each meter's register stands: its last register reading (meter_latest), in its catalogue unit. */
export async function registerReadings(db: Kysely<EnergyDatabase>): Promise<Map<number, number>> {
  const { rows } = await sql<{ meter_id: number; value: number }>`
    select meter_id, register_value as value from meter_latest where register_at is not null`.execute(db)
  return new Map(rows.map((r) => [r.meter_id, r.value]))
}
