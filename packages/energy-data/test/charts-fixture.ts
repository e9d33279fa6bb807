/**
 * A small deterministic data set for the chart, report and dashboard tests: eight local days in
 * Europe/Rome, 2025-10-20 to 2025-10-27, holding the fall-back day 2025-10-26 (100 quarter hours)
 * and a two-hour gap on 2025-10-22, in every table the views read. Values are simple functions of
 * the quarter-hour index so the tests recompute every expectation in JavaScript.
 */
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import { sql } from 'kysely'
import type { EnergyDatabase } from '../src/db/schema.ts'
import { energyService } from '../src/service.ts'

export const FIRST_QUARTER = Date.parse('2025-10-19T22:00:00Z') // 2025-10-20 00:00 +02:00
export const END = Date.parse('2025-10-27T23:00:00Z') // 2025-10-28 00:00 +01:00 (exclusive)
export const Q = 15 * 60_000
export const QUARTERS = (END - FIRST_QUARTER) / Q // 8 * 96 + 4 = 772
export const LAST_QUARTER = END - Q
/** 2025-10-22 10:00-12:00 local (+02:00): eight quarter hours missing from every table. */
export const GAP_FROM = Date.parse('2025-10-22T08:00:00Z')
export const GAP_TO = Date.parse('2025-10-22T10:00:00Z')

export const METER_ID = 860
export const EMPTY_METER_ID = 861

export interface Slot {
  i: number
  t: number
}

/** The quarter hours present (the gap left out). */
export const slots: Slot[] = Array.from({ length: QUARTERS }, (_, i) => ({ i, t: FIRST_QUARTER + i * Q })).filter(
  (s) => s.t < GAP_FROM || s.t >= GAP_TO,
)

const utcHour = (t: number) => new Date(t).getUTCHours() + new Date(t).getUTCMinutes() / 60
/** Sun between 05:00 and 15:00 UTC, peaking at 10:00. */
export const bell = (t: number) => Math.max(0, Math.sin((Math.PI * (utcHour(t) - 5)) / 10))
const dayFactor = (i: number) => 1 + (Math.floor(i / 96) % 3) / 10

export const PLANT_FACTORS = {
  tot_pv_aule_p: 10,
  tot_pv_aule_r: 4,
  tot_pv_castelfidardo: 6,
  tot_pv_cit: 8,
  tot_pv_ec: 12,
  tot_pv_i3p: 3,
} as const
export type Plant = keyof typeof PLANT_FACTORS

/** kWh in the quarter hour. */
export const plant = (p: Plant, s: Slot) => Number((PLANT_FACTORS[p] * bell(s.t) * dayFactor(s.i)).toFixed(4))
export const totPv = (s: Slot) => (Object.keys(PLANT_FACTORS) as Plant[]).reduce((sum, p) => sum + plant(p, s), 0)

export const production = (s: Slot) => Number((8 * bell(s.t)).toFixed(4))
export const consumption = (s: Slot) => 3 + (s.i % 5)

export const FOUNTAINS = [
  'tot_font_aula_magna',
  'tot_font_aule_p',
  'tot_font_corr_denerg',
  'tot_font_corr_nord',
  'tot_font_corr_sud',
] as const
export const mainWater = (s: Slot) => 0.5 + (s.i % 7) / 10
export const fountain = (k: number, s: Slot) => (0.01 * (k + 1) * (s.i % 4)) / 1
export const radiation = (s: Slot) => 800 * bell(s.t)

/** Chiller 1 runs 06:00-16:00 UTC at 20 kWh a quarter hour, idles at 1 otherwise. */
export const cf1 = (s: Slot) => (utcHour(s.t) >= 6 && utcHour(s.t) < 16 ? 20 : 1)
export const cf2 = () => 5
export const cf3 = (s: Slot) => s.i % 10
export const datacenter = (s: Slot) => 30 + (s.i % 3)

export interface MeterRowFixture {
  t: number
  avg: number
  min: number
  max: number
  sum: number
  count: number
  tag: string
}
export const meterRow = (s: Slot): MeterRowFixture => {
  const avg = 10 + (s.i % 10)
  const count = s.i % 13 === 0 ? 14 : 15
  return {
    t: s.t,
    avg,
    min: avg - 1 - (s.i === 300 ? 5 : 0),
    max: avg + 1 + (s.i === 100 ? 50 : 0),
    sum: avg * count,
    count,
    tag: s.i % 50 === 0 ? 'estimated' : 'ok',
  }
}

/** Plain parameterised INSERTs in chunks (the table is a fixture constant, never input). */
async function insertChunks(
  pool: TestDatabase<EnergyDatabase>['pool'],
  table: string,
  rows: Record<string, unknown>[],
) {
  const columns = Object.keys(rows[0]!)
  for (let k = 0; k < rows.length; k += 500) {
    const chunk = rows.slice(k, k + 500)
    const values = chunk.map((_, r) => `(${columns.map((_c, c) => `$${r * columns.length + c + 1}`).join(', ')})`)
    await pool.query(
      `insert into ${table} (${columns.join(', ')}) values ${values.join(', ')}`,
      chunk.flatMap((row) => columns.map((c) => row[c])),
    )
  }
}

export async function createFixtureDatabase(): Promise<TestDatabase<EnergyDatabase>> {
  const database = await createTestDatabase<EnergyDatabase>('energy', energyService.migrationsDir)
  const { db } = database
  const iso = (t: number) => new Date(t).toISOString()
  await db
    .insertInto('dataloggers')
    .values({ id: 'DL-AULEP', description: 'Datalogger Aule P', serial: 'SN-0001', ip: '10.0.0.10' })
    .execute()
  await db
    .insertInto('meters')
    .values([
      {
        id: METER_ID,
        description: '860) Quadro generale Aule P',
        datalogger_id: 'DL-AULEP',
        type_id: 'brick:Electrical_Energy_Sensor',
        unit_id: 'unit:KiloW-HR',
        quantity_id: 'quantitykind:Energy',
        date_from: '2020-01-01T00:00:00Z',
      },
      { id: EMPTY_METER_ID, description: '861) Riserva', datalogger_id: 'DL-AULEP' },
    ])
    .execute()
  await insertChunks(
    database.pool,
    'pv_15m',
    slots.map((s) => ({
      time_15m: iso(s.t),
      tot_pv: totPv(s),
      ...Object.fromEntries((Object.keys(PLANT_FACTORS) as Plant[]).map((p) => [p, plant(p, s)])),
    })),
  )
  await insertChunks(
    database.pool,
    'aulep_15m',
    slots.map((s) => ({
      time_15m: iso(s.t),
      tot_pv_prod: production(s),
      consumo_aula_1p: consumption(s),
      surplus_pv: Math.max(production(s) - consumption(s), 0),
    })),
  )
  await insertChunks(
    database.pool,
    'water_15m',
    slots.map((s) => ({
      time_15m: iso(s.t),
      tot_sede_centrale: mainWater(s),
      ...Object.fromEntries(FOUNTAINS.map((f, k) => [f, fountain(k, s)])),
    })),
  )
  await insertChunks(
    database.pool,
    'weather_15m',
    slots.map((s) => ({ time_15m: iso(s.t), global_solar_radiation: radiation(s), air_temperature: 12 })),
  )
  await insertChunks(
    database.pool,
    'centrali_frigo_15m',
    slots.map((s) => ({ time_15m: iso(s.t), cf1_tot: cf1(s), cf2_tot: cf2(), cf3_tot: cf3(s) })),
  )
  await insertChunks(
    database.pool,
    'datacenter_1_15m',
    slots.map((s) => ({ time_15m: iso(s.t), tot_dc: datacenter(s) })),
  )
  await insertChunks(
    database.pool,
    'data_15m',
    slots.map((s) => {
      const r = meterRow(s)
      return {
        time_15m: iso(r.t),
        meter_id: METER_ID,
        avg_value: r.avg,
        min_value: r.min,
        max_value: r.max,
        sum_value: r.sum,
        count_value: r.count,
        tag: r.tag,
      }
    }),
  )
  await sql`analyze`.execute(db)
  return database
}

const dayFormat = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Europe/Rome',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
})
const hourFormat = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Rome', hour: '2-digit', hourCycle: 'h23' })
const weekdayFormat = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Rome', weekday: 'short' })

/** Local day `YYYY-MM-DD` of a quarter hour in Europe/Rome, via Intl (not the SQL under test). */
export const romeDay = (t: number) => dayFormat.format(new Date(t))
export const romeHour = (t: number) => Number(hourFormat.format(new Date(t)))
export const romeWeekend = (t: number) => ['Sat', 'Sun'].includes(weekdayFormat.format(new Date(t)))

/** Sums of `value` per local day over the slots in `[from, to)`. */
export function dailySums(value: (s: Slot) => number, from = FIRST_QUARTER, to = END): Map<string, number> {
  const sums = new Map<string, number>()
  for (const s of slots) {
    if (s.t < from || s.t >= to) continue
    const day = romeDay(s.t)
    sums.set(day, (sums.get(day) ?? 0) + value(s))
  }
  return sums
}
