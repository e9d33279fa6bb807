/**
 * Local calendars in every zone: hours, days, weeks and months in zones whose clocks change at
 * midnight (Africa/Cairo, America/Santiago), repeat midnight (America/Havana), move by 30 minutes
 * (Australia/Lord_Howe) or sit on a half or three-quarter hour (Asia/Kolkata, Asia/Kathmandu),
 * beside Europe/Rome, UTC and New York. Each bucket expected here is made by walking UTC quarter
 * hours through Intl and grouping them by their wall-clock date, hour and offset: nothing of the
 * service's calendar code or SQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GROUP_COLUMNS } from '../src/catalogue/groups.ts'
import { type DataSet, type Harness, insertMeterReadings, insertRows, startHarness } from './harness.ts'
import { local, QUARTER, quarters, served } from './support.ts'

const DATA_FROM = '2025-02-20T00:00:00Z'
const DATA_TO = '2025-11-12T00:00:00Z'
/** Quarter hours left out of the tables, so that coverage has something to count. */
const missing = (t: number) => (t / QUARTER) % 37 === 5
const STORED = quarters(DATA_FROM, DATA_TO).filter((t) => !missing(t))
const isStored = new Set(STORED)

const pvValue = (t: number, column: number): number | null =>
  column === 2 && (t / QUARTER) % 5 === 0 ? null : Math.round((Math.sin(t / 3_600_000 + column) + 1.5) * 1000) / 1000
const meterSum = (t: number) => Math.round((40 + Math.cos(t / 5_400_000) * 10) * 1000) / 1000
const meterCount = (t: number) => ((t / QUARTER) % 11 === 0 ? 14 : 15)

const data: DataSet = async (database) => {
  await database.db
    .insertInto('dataloggers')
    .values({ id: 'DL-1', description: 'Logger one', notes: null, serial: 'SN-1', date_from: null, ip: '10.0.0.1' })
    .execute()
  await database.db.insertInto('meters').values({ id: 1, description: '1) Quadro', datalogger_id: 'DL-1' }).execute()
  await insertRows(
    database,
    'pv_15m',
    STORED.map((t) => ({
      time_15m: new Date(t),
      ...Object.fromEntries(GROUP_COLUMNS.pv.map((c, i) => [c, pvValue(t, i)])),
    })),
  )
  await insertMeterReadings(
    database,
    STORED.map((t) => {
      const sum = meterSum(t)
      const count = meterCount(t)
      return { time: t, meter: 1, avg: sum / count, min: sum / count - 1, max: sum / count + 1, sum, count, tag: 'ok' }
    }),
  )
}

let h: Harness
let key: string

beforeAll(async () => {
  h = await startHarness({ now: () => Date.parse('2025-11-20T12:00:00Z'), data })
  key = await h.key(['/data/*'])
})
afterAll(async () => h?.close())

type Row = Record<string, unknown>
type Unit = '1 h' | '1 d' | '1 w' | '1 mon'

/** The bucket a quarter hour falls in, named by its wall clock in `zone`: date, hour and offset. */
function bucketKey(t: number, zone: string, unit: Unit): string {
  const { iso, date } = local(t, zone)
  const offset = iso.slice(19)
  if (unit === '1 h') return `${iso.slice(0, 13)}${offset}`
  if (unit === '1 d') return date
  if (unit === '1 mon') return date.slice(0, 7)
  const day = new Date(`${date}T00:00:00Z`)
  day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7))
  return day.toISOString().slice(0, 10)
}

interface Bucket {
  key: string
  quarters: number[]
}

/** Every bucket holding a quarter hour of `[from, to]`, each with all of its quarter hours. */
function expectedBuckets(from: number, to: number, zone: string, unit: Unit): Bucket[] {
  const margin = unit === '1 mon' ? 33 * 86_400_000 : unit === '1 w' ? 8 * 86_400_000 : 2 * 86_400_000
  const all = new Map<string, number[]>()
  const wanted: string[] = []
  for (let t = from - margin; t <= to + margin; t += QUARTER) {
    const k = bucketKey(t, zone, unit)
    const list = all.get(k)
    if (list) list.push(t)
    else all.set(k, [t])
    if (t >= from && t <= to && wanted[wanted.length - 1] !== k) wanted.push(k)
  }
  return wanted.map((k) => ({ key: k, quarters: all.get(k) as number[] }))
}

const get = async (url: string) => {
  const response = await h.app.inject({ url, headers: { 'x-api-key': key } })
  expect(response.statusCode, `${url}: ${response.body}`).toBe(200)
  return response.json() as Row[]
}

const mean = (values: Array<number | null>) => {
  const present = values.filter((v): v is number => v !== null)
  return present.length ? present.reduce((a, b) => a + b, 0) / present.length : null
}

const q = encodeURIComponent

/** Checks a group and a meter answer, `fill=null&coverage=true`, against the buckets walked here. */
async function checkWindow(zone: string, unit: Unit, start: string, end: string): Promise<void> {
  const from = Date.parse(start)
  const to = Date.parse(end)
  const buckets = expectedBuckets(from, to, zone, unit)
  const window = `aggregation=${q(unit)}&start_datetime=${q(start)}&end_datetime=${q(end)}&timezone=${q(zone)}`
  const label = `${zone} ${unit} ${start}..${end}`

  const pv = await get(`/data/pv?${window}&fill=null&coverage=true`)
  expect(
    pv.map((r) => r.time_15m),
    label,
  ).toEqual(buckets.map((b) => local(b.quarters[0] as number, zone).iso))
  pv.forEach((row, i) => {
    const bucket = buckets[i] as Bucket
    const measured = bucket.quarters.filter((t) => isStored.has(t))
    expect(row.coverage, `${label} ${bucket.key}`).toBe(served(measured.length / bucket.quarters.length))
    GROUP_COLUMNS.pv.forEach((c, k) => {
      const expected = mean(measured.map((t) => pvValue(t, k)))
      if (expected === null) expect(row[c], `${label} ${bucket.key} ${c}`).toBeNull()
      else expect(row[c] as number, `${label} ${bucket.key} ${c}`).toBeCloseTo(expected, 9)
    })
  })

  const meter = await get(`/data/meters?${window}&meter_ids=1&fill=null&coverage=true`)
  expect(meter).toHaveLength(buckets.length)
  meter.forEach((row, i) => {
    const bucket = buckets[i] as Bucket
    const measured = bucket.quarters.filter((t) => isStored.has(t))
    expect(row.count_value, `${label} ${bucket.key}`).toBe(measured.reduce((n, t) => n + meterCount(t), 0))
    if (measured.length === 0) expect(row.sum_value).toBeNull()
    else
      expect(row.sum_value as number, `${label} ${bucket.key}`).toBeCloseTo(
        measured.reduce((n, t) => n + meterSum(t), 0),
        6,
      )
  })

  // without fill: the buckets that hold a quarter hour, the same times
  const plain = await get(`/data/pv?${window}`)
  expect(
    plain.map((r) => r.time_15m),
    label,
  ).toEqual(pv.filter((r) => (r.coverage as number) > 0).map((r) => r.time_15m))
}

/** Each zone's clock changes of 2025 (UTC days around them), and what is odd about them. */
const CHANGES: Array<[string, string, string]> = [
  ['Africa/Cairo', '2025-04-23', '2025-04-27'], // 2025-04-25 starts at 01:00: midnight skipped
  ['Africa/Cairo', '2025-10-29', '2025-11-02'], // midnight back to 23:00 on 2025-10-30
  ['America/Santiago', '2025-04-04', '2025-04-08'], // 24:00 back to 23:00 on 2025-04-05
  ['America/Santiago', '2025-09-05', '2025-09-09'], // 2025-09-07 starts at 01:00
  ['America/Havana', '2025-03-07', '2025-03-11'], // 2025-03-09 starts at 01:00
  ['America/Havana', '2025-10-31', '2025-11-04'], // 2025-11-02 holds midnight twice
  ['Australia/Lord_Howe', '2025-04-04', '2025-04-08'], // 02:00+11:00 back to 01:30+10:30
  ['Australia/Lord_Howe', '2025-10-03', '2025-10-07'], // 02:00+10:30 on to 02:30+11:00
  ['Asia/Kolkata', '2025-03-28', '2025-04-01'],
  ['Asia/Kathmandu', '2025-03-28', '2025-04-01'],
  ['Europe/Rome', '2025-03-28', '2025-04-01'],
  ['Europe/Rome', '2025-10-24', '2025-10-28'],
  ['America/New_York', '2025-11-01', '2025-11-04'],
  ['UTC', '2025-03-28', '2025-04-01'],
]

describe('hours and days around every clock change', () => {
  it.each(CHANGES)('%s from %s to %s', async (zone, from, to) => {
    for (const unit of ['1 h', '1 d'] as const) await checkWindow(zone, unit, `${from} 00:00:00`, `${to} 00:00:00`)
    // a window that starts and ends inside buckets
    await checkWindow(zone, '1 d', `${from} 13:15:00`, `${to} 07:45:00`)
  })
})

describe('weeks and months', () => {
  it.each([
    'Africa/Cairo',
    'America/Havana',
    'Australia/Lord_Howe',
    'Asia/Kathmandu',
    'Europe/Rome',
    'America/New_York',
  ])('%s', async (zone) => {
    await checkWindow(zone, '1 w', '2025-03-20 00:00:00', '2025-05-05 00:00:00')
    await checkWindow(zone, '1 w', '2025-10-15 00:00:00', '2025-11-10 00:00:00')
    await checkWindow(zone, '1 mon', '2025-03-01 00:00:00', '2025-10-31 23:45:00')
  })
})

describe('the days of the report that found them', () => {
  it('Africa/Cairo 2025-04-25 is one 23-hour day starting at 01:00+03:00, whole', async () => {
    const rows = await get(
      `/data/pv?aggregation=1%20d&start_datetime=${q('2025-04-24 22:00:00')}&end_datetime=${q('2025-04-25 20:00:00')}&timezone=Africa/Cairo&coverage=true`,
    )
    expect(rows.map((r) => r.time_15m)).toEqual(['2025-04-25T01:00:00+03:00'])
    const quartersOfDay = quarters('2025-04-24T22:00:00Z', '2025-04-25T21:00:00Z')
    expect(rows[0]?.coverage).toBe(served(quartersOfDay.filter((t) => isStored.has(t)).length / 92))
  })

  it('America/Havana 2025-11-02 is one 25-hour day labelled with the offset of its first midnight', async () => {
    const rows = await get(
      `/data/pv?aggregation=1%20d&start_datetime=2025-11-02T00:00:00-04:00&end_datetime=2025-11-02T23:45:00-05:00&timezone=America/Havana&coverage=true`,
    )
    expect(rows.map((r) => r.time_15m)).toEqual(['2025-11-02T00:00:00-04:00'])
    expect(rows[0]?.coverage as number).toBeLessThanOrEqual(1)
  })

  it('Australia/Lord_Howe keeps every hour after its 30-minute change under fill=null', async () => {
    const rows = await get(
      `/data/pv?aggregation=1%20h&start_datetime=2025-10-04T12:00:00Z&end_datetime=2025-10-05T14:00:00Z&timezone=Australia/Lord_Howe&fill=null`,
    )
    const empty = rows.filter((r) => r.tot_pv === null)
    expect(empty).toEqual([])
    expect(rows.map((r) => r.time_15m)).toContain('2025-10-05T02:30:00+11:00')
  })
})
