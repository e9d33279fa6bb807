import type { Kysely, Selectable } from 'kysely'
import type { DataloggerTable, EnergyDatabase, MeterTable } from '../db/schema.ts'

/** A meter, with the description of its datalogger and, for a virtual meter, its formula. */
export type MeterRow = Selectable<MeterTable> & { datalogger_description: string | null; formula: string | null }
export type DataloggerRow = Selectable<DataloggerTable>

function meters(db: Kysely<EnergyDatabase>) {
  return db
    .selectFrom('meters')
    .leftJoin('dataloggers', 'dataloggers.id', 'meters.datalogger_id')
    .leftJoin('virtual_meters', 'virtual_meters.id', 'meters.id')
    .selectAll('meters')
    .select(['dataloggers.description as datalogger_description', 'virtual_meters.formula'])
}

export function listMeters(db: Kysely<EnergyDatabase>): Promise<MeterRow[]> {
  return meters(db).orderBy('meters.id').execute()
}

export function findMeter(db: Kysely<EnergyDatabase>, id: number): Promise<MeterRow | undefined> {
  return meters(db).where('meters.id', '=', id).executeTakeFirst()
}

/** The most recently installed meter (latest `date_from`; the highest id among equals or undated); a virtual meter is installed nowhere. */
export function lastInstalledMeter(db: Kysely<EnergyDatabase>): Promise<MeterRow | undefined> {
  return meters(db)
    .where('virtual_meters.id', 'is', null)
    .orderBy('meters.date_from', (o) => o.desc().nullsLast())
    .orderBy('meters.id', 'desc')
    .limit(1)
    .executeTakeFirst()
}

/** The lowest and highest meter ids in use; null for both when there is no meter. */
export async function meterIdRange(
  db: Kysely<EnergyDatabase>,
): Promise<{ lowest: number | null; highest: number | null }> {
  const row = await db
    .selectFrom('meters')
    .select((eb) => [eb.fn.min('id').as('lowest'), eb.fn.max('id').as('highest')])
    .executeTakeFirst()
  return { lowest: row?.lowest ?? null, highest: row?.highest ?? null }
}

/** Which of these ids are not meters. */
export async function unknownMeterIds(db: Kysely<EnergyDatabase>, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return []
  const found = await db
    .selectFrom('meters')
    .select('id')
    .where('id', 'in', [...ids])
    .execute()
  const known = new Set(found.map((r) => r.id))
  return ids.filter((id) => !known.has(id))
}

export function listDataloggers(db: Kysely<EnergyDatabase>): Promise<DataloggerRow[]> {
  return db.selectFrom('dataloggers').selectAll().orderBy('id').execute()
}

export function findDatalogger(db: Kysely<EnergyDatabase>, id: string): Promise<DataloggerRow | undefined> {
  return db.selectFrom('dataloggers').selectAll().where('id', '=', id).executeTakeFirst()
}
