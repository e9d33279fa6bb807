import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { buildApp } from '../src/app.ts'
import { GROUP_COLUMNS } from '../src/catalogue/groups.ts'
import { defaultSettings, type EnergySettings } from '../src/config.ts'
import type { EnergyDatabase } from '../src/db/schema.ts'
import { createApiKey } from '../src/repositories/api-keys.ts'
import { energyService } from '../src/service.ts'

export interface Harness {
  database: TestDatabase<EnergyDatabase>
  db: Kysely<EnergyDatabase>
  app: FastifyInstance
  close(): Promise<void>
}

export async function startHarness(
  options: { settings?: Partial<EnergySettings>; now?: () => number } = {},
): Promise<Harness> {
  const database = await createTestDatabase<EnergyDatabase>('energy', energyService.migrationsDir)
  const app = await buildApp({
    database,
    settings: defaultSettings(options.settings),
    now: options.now,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
  })
  await app.ready()
  return {
    database,
    db: database.db,
    app,
    close: async () => {
      await app.close()
      await database.close()
    },
  }
}

export async function keyFor(db: Kysely<EnergyDatabase>, endpoints: string[], name = 'test'): Promise<string> {
  return (await createApiKey(db, { name, endpoints })).key
}

export const QUARTER = 900_000

/** Every quarter hour in [from, to). */
export function quarters(from: string, to: string): number[] {
  const out: number[] = []
  for (let t = Date.parse(from); t < Date.parse(to); t += QUARTER) out.push(t)
  return out
}

/** The fixture windows: both DST days of 2025 in Europe/Rome with a day either side. */
export const FIXTURE_TIMES = [
  ...quarters('2025-03-28T00:00:00Z', '2025-04-01T00:00:00Z'),
  ...quarters('2025-10-24T00:00:00Z', '2025-10-28T00:00:00Z'),
]

/** A gap: two hours without any row, on the day before the spring change. */
export const GAP = { from: Date.parse('2025-03-29T10:00:00Z'), to: Date.parse('2025-03-29T12:00:00Z') }
const inGap = (t: number) => t >= GAP.from && t < GAP.to

export function pvValue(t: number, column: number): number | null {
  if (column === 3 && (t / QUARTER) % 7 === 0) return null // a column missing now and then
  return Math.round((Math.sin(t / 3_600_000 + column) + 1.5) * 1000 * (column + 1)) / 1000
}

export interface MeterFixtureRow {
  time: number
  meter: number
  avg: number | null
  min: number | null
  max: number | null
  sum: number | null
  count: number | null
  tag: string
}

export function meterRows(): MeterFixtureRow[] {
  const rows: MeterFixtureRow[] = []
  for (const meter of [1, 2]) {
    for (const time of FIXTURE_TIMES) {
      if (inGap(time)) continue
      const k = time / QUARTER
      const count = k % 11 === 0 ? 14 : 15
      const avg = Math.round((20 + meter * 5 + Math.cos(k / 9) * 4) * 1000) / 1000
      const tag = k % 13 === 0 ? 'estimated' : k % 29 === 0 ? 'suspect' : 'ok'
      rows.push({ time, meter, avg, min: avg - 1.5, max: avg + 2.25, sum: avg * count, count, tag })
    }
  }
  return rows
}

export async function insertFixtures(db: Kysely<EnergyDatabase>): Promise<void> {
  await db
    .insertInto('dataloggers')
    .values([
      {
        id: 'DL-1',
        description: 'Logger one',
        notes: null,
        serial: 'SN-1',
        date_from: '2019-01-01T00:00:00Z',
        ip: '10.0.0.1',
      },
      { id: 'DL-2', description: null, notes: 'spare', serial: 'SN-2', date_from: null, ip: '10.0.0.2' },
    ])
    .execute()
  await db
    .insertInto('meters')
    .values([
      {
        id: 1,
        description: '1) Quadro generale',
        datalogger_id: 'DL-1',
        date_from: '2019-01-01T00:00:00Z',
        type_id: 'brick:Electrical_Energy_Sensor',
        unit_id: 'unit:KiloW-HR',
        quantity_id: 'quantitykind:Energy',
      },
      { id: 2, description: '2) Pompe', datalogger_id: 'DL-1', date_from: '2021-06-01T00:00:00Z' },
      { id: 7, description: '7) Riserva', datalogger_id: 'DL-2' },
    ])
    .execute()
  const meter = meterRows()
  for (let i = 0; i < meter.length; i += 1000) {
    await db
      .insertInto('data_15m')
      .values(
        meter.slice(i, i + 1000).map((r) => ({
          time_15m: new Date(r.time),
          meter_id: r.meter,
          avg_value: r.avg,
          min_value: r.min,
          max_value: r.max,
          sum_value: r.sum,
          count_value: r.count,
          tag: r.tag,
        })),
      )
      .execute()
  }
  const columns = GROUP_COLUMNS.pv
  const pv = FIXTURE_TIMES.filter((t) => !inGap(t)).map((t) => {
    const row: Record<string, unknown> = { time_15m: new Date(t) }
    columns.forEach((c, i) => {
      row[c] = pvValue(t, i)
    })
    return row
  })
  for (let i = 0; i < pv.length; i += 500) {
    await db
      .insertInto('pv_15m')
      .values(pv.slice(i, i + 500) as never)
      .execute()
  }
}

/** Local calendar parts of an instant in a zone, computed with Intl (independently of the service's SQL). */
export function localParts(ms: number, zone: string): { date: string; hour: number } {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(ms)
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? ''
  return { date: `${get('year')}-${get('month')}-${get('day')}`, hour: Number(get('hour')) }
}
