import { type Kysely, sql } from 'kysely'
import type { EnergyDatabase } from '../db/schema.ts'

/** The time zone names the database knows: every zone a query may be asked to compute in. */
export async function databaseZoneNames(db: Kysely<EnergyDatabase>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from pg_timezone_names`.execute(db)
  return rows.map((row) => row.name)
}
