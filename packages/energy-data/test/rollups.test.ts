/**
 * Hourly rollups: every aggregation of an hour or more read from them answers what the quarter
 * hours answer (the same query on `quarterScan`), in zones whose buckets are whole UTC hours, and
 * zones that are not (+05:30) are read from the quarter hours; two writers into one hour leave the
 * rollup equal to a recomputation of its rows in SQL of the test's own.
 */
import { needsService } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import { GROUP_COLUMNS } from '../src/catalogue/groups.ts'
import { seed } from '../src/commands/seed.ts'
import { defaultSettings } from '../src/config.ts'
import { AGGREGATION_VALUES, type Aggregation } from '../src/domain/aggregation.ts'
import { bucketStart } from '../src/domain/buckets.ts'
import { encoding } from '../src/export/encoders.ts'
import { measurementsWritten } from '../src/repositories/measurement-writes.ts'
import { planSeries, readSeries, type SeriesRequest, type SeriesSource } from '../src/repositories/measurements.ts'
import { buildCalendar, calendarZone, ROLLUP_LOCK } from '../src/repositories/rollups.ts'
import { dailyTotals } from '../src/repositories/views.ts'
import { type Harness, startHarness } from './harness.ts'

let h: Harness

beforeAll(async () => {
  h = await startHarness({
    data: async (database) => {
      // the leap day and the spring change of 2024, and the autumn one, through the write path
      await seed(database.pool, { from: '2024-02-25', to: '2024-04-02', seed: '5' })
      await seed(database.pool, { from: '2024-10-24', to: '2024-10-30', seed: '5' })
    },
  })
})
afterAll(async () => h?.close())

const { rowSql } = encoding('raw', String)

async function answer(
  request: SeriesRequest,
): Promise<{ level: string | undefined; rows: Array<Record<string, unknown>> }> {
  const plan = await planSeries(h.database.pool, request)
  const rows: Array<Record<string, unknown>> = []
  for await (const slice of readSeries(h.database.pool, request, plan, rowSql)) {
    for (const [ms, text] of slice) rows.push({ t: ms, ...(JSON.parse(`{${text}}`) as Record<string, unknown>) })
  }
  return { level: plan.level, rows }
}

/** Equal, numbers within 1e-9 relative (the sums are added in another order). */
function expectSame(actual: Array<Record<string, unknown>>, expected: Array<Record<string, unknown>>, what: string) {
  expect(actual.length, what).toBe(expected.length)
  actual.forEach((row, i) => {
    const other = expected[i] as Record<string, unknown>
    expect(Object.keys(row), what).toEqual(Object.keys(other))
    for (const [k, v] of Object.entries(row)) {
      const w = other[k]
      if (typeof v === 'number' && typeof w === 'number') {
        expect(Math.abs(v - w), `${what} row ${i} ${k}: ${v} vs ${w}`).toBeLessThanOrEqual(
          1e-9 * Math.max(1, Math.abs(w)),
        )
      } else expect(v, `${what} row ${i} ${k}`).toEqual(w)
    }
  })
}

const SOURCES: Array<[string, SeriesSource]> = [
  ['pv', { kind: 'group', group: 'pv' }],
  ['water', { kind: 'group', group: 'water' }],
  ['meters ok', { kind: 'meters', ids: [860, 861, 920, 930], tags: ['ok'] }],
  ['meters every tag', { kind: 'meters', ids: [860, 920], tags: ['ok', 'estimated', 'interpolated', 'suspect'] }],
]

describe('buckets of an hour or more from the rollups', () => {
  const aggregations = AGGREGATION_VALUES.filter((a) => a !== '15 m' && a !== '30 m') as Aggregation[]

  it.each(['Europe/Rome', 'UTC', 'America/New_York', 'Asia/Kolkata'])(
    'equal the quarter-hour answer in %s: every aggregation, fill, coverage, totals and tag',
    async (zone) => {
      let compared = 0
      for (const aggregation of aggregations) {
        for (const [name, source] of SOURCES) {
          for (const fill of ['none', 'null'] as const) {
            const request: SeriesRequest = {
              source,
              aggregation,
              zone,
              startMs: Date.parse('2024-02-26T00:00:00Z'),
              endMs: Date.parse('2024-10-29T23:45:00Z'),
              fill,
              coverage: true,
              totals: true,
            }
            const fromRollups = await answer(request)
            const fromQuarters = await answer({ ...request, quarterScan: true })
            // the service's zone reads its days and months; another whole-hour zone the hours; +05:30,
            // whose hours are cut in two, the quarter hours
            const expected =
              zone === 'Asia/Kolkata'
                ? undefined
                : zone === 'Europe/Rome' && aggregation !== '1 h'
                  ? aggregation === '1 mon'
                    ? 'month'
                    : 'day'
                  : 'hour'
            expect(fromRollups.level, `${zone} ${aggregation}`).toBe(expected)
            expect(fromQuarters.level).toBeUndefined()
            expect(fromQuarters.rows.length).toBeGreaterThan(0)
            expectSame(fromRollups.rows, fromQuarters.rows, `${zone} ${aggregation} ${name} fill=${fill}`)
            compared += fromQuarters.rows.length
          }
        }
      }
      expect(compared).toBeGreaterThan(10_000)
    },
  )
})

describe('daily totals of the reports and charts', () => {
  const from = (zone: string) => bucketStart('1 d', zone, Date.parse('2024-02-26T12:00:00Z'))
  const to = (zone: string) => bucketStart('1 d', zone, Date.parse('2024-10-30T12:00:00Z'))

  it.each(['Europe/Rome', 'UTC', 'America/New_York', 'Asia/Kolkata'])(
    'equal the quarter-hour totals in %s, the leap day and both changes of the clock included',
    async (zone) => {
      const compare = async <G extends 'pv' | 'water'>(group: G) => {
        const columns = GROUP_COLUMNS[group]
        const rolled = await dailyTotals(h.database.db, group, columns, from(zone), to(zone), zone)
        const scanned = await dailyTotals(h.database.db, group, columns, from(zone), to(zone), zone, {
          quarterScan: true,
        })
        expect(scanned.map((d) => d.day)).toContain('2024-02-29')
        expect(scanned.find((d) => d.day === '2024-03-31')?.quarters).toBe(zone === 'Europe/Rome' ? 92 : 96)
        const flat = (days: typeof rolled) =>
          days.map(({ day, quarters, sums, counts }) => ({
            day,
            quarters,
            ...sums,
            ...Object.fromEntries(Object.entries(counts).map(([c, n]) => [`${c} quarters`, n])),
          }))
        expectSame(flat(rolled), flat(scanned), `${zone} ${group}`)
      }
      await compare('pv')
      await compare('water')
    },
  )

  it('are read from the rollups wherever their hours serve the days, else from the quarter hours', async () => {
    // a quarter hour written by plain SQL is in no rollup until its hour is refreshed
    const quarter = new Date('2024-06-05T10:00:00Z')
    await h.database.pool.query('insert into pv_15m (time_15m, tot_pv) values ($1, 42)', [quarter])
    try {
      for (const zone of ['Europe/Rome', 'UTC', 'America/New_York', 'Asia/Kolkata']) {
        const day = bucketStart('1 d', zone, quarter.getTime())
        const next = bucketStart('1 d', zone, day + 36 * 3_600_000)
        const read = await dailyTotals(h.database.db, 'pv', ['tot_pv'], day, next, zone)
        expect(read, zone).toEqual(
          zone === 'Asia/Kolkata'
            ? [{ day: '2024-06-05', quarters: 1, sums: { tot_pv: 42 }, counts: { tot_pv: 1 } }]
            : [],
        )
        // a window that does not start at a local midnight reads the quarter hours
        const partial = await dailyTotals(h.database.db, 'pv', ['tot_pv'], day + 3_600_000, next, zone)
        expect(
          partial.map((d) => d.quarters),
          zone,
        ).toEqual([1])
      }
    } finally {
      await h.database.pool.query('delete from pv_15m where time_15m = $1', [quarter])
    }
  })
})

// two writers at once need two connections to one server: the embedded database runs one transaction at a time
const onServer = await needsService('concurrent rollup writers (a PostgreSQL server)', 'TEST_DATABASE_URL')

describe.runIf(onServer)('two writers into one hour', () => {
  it('leave the rollup equal to a recomputation of its quarter hours, whichever commits first', async () => {
    const hour = Date.parse('2024-03-10T08:00:00Z')
    const pool = h.database.pool
    await pool.query('delete from data_15m where meter_id = 930 and time_15m >= $1 and time_15m < $2', [
      new Date(hour),
      new Date(hour + 3_600_000),
    ])
    const a = await pool.connect()
    const b = await pool.connect()
    try {
      const write = (client: typeof a, quarter: number, value: number) =>
        client.query(
          `insert into data_15m (time_15m, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag)
           values ($1, 930, $2::float8, $2::float8, $2::float8, $2::float8 * 15, 15, 'ok')`,
          [new Date(hour + quarter * 900_000), value],
        )
      const change = { tables: ['data_15m'], fromMs: hour, toMs: hour + 3_600_000 }
      await a.query('begin')
      await b.query('begin')
      await write(a, 0, 10)
      await write(a, 1, 11)
      await write(b, 2, 12)
      await write(b, 3, 13)
      // a recomputes while b's rows are not committed; b waits for a's lock, then recomputes
      await measurementsWritten(a, change)
      const bDone = measurementsWritten(b, change).then(() => b.query('commit'))
      await new Promise((resolve) => setTimeout(resolve, 200))
      await a.query('commit')
      await bDone
    } finally {
      a.release()
      b.release()
    }
    const rollup = await pool.query(
      `select quarters, values_n, avg_sum, min_value, max_value, sum_value, count_value::int from data_rollup
       where level = 'hour' and meter_id = 930 and start = $1 and tag = 'ok'`,
      [new Date(hour)],
    )
    const recomputed = await pool.query(
      `select count(*)::int as quarters, count(avg_value)::int as values_n, sum(avg_value) as avg_sum,
         min(min_value) as min_value, max(max_value) as max_value, sum(sum_value) as sum_value, sum(count_value)::int as count_value
       from data_15m where meter_id = 930 and tag = 'ok' and time_15m >= $1 and time_15m < $2`,
      [new Date(hour), new Date(hour + 3_600_000)],
    )
    expect(recomputed.rows[0]).toEqual({
      quarters: 4,
      values_n: 4,
      avg_sum: 46,
      min_value: 10,
      max_value: 13,
      sum_value: 690,
      count_value: 60,
    })
    expect(rollup.rows).toEqual(recomputed.rows)
  })

  it('a start does not wait for the days and months of its zone: it answers from the hours meanwhile', async () => {
    const pool = h.database.pool
    const key = await h.key(['*'])
    const url =
      '/data/pv?aggregation=1%20d&timezone=UTC&start_datetime=2024-03-01%2000:00:00&end_datetime=2024-03-04%2000:00:00'
    // a writer (or another instance's build) holds the rollup lock: the build must wait for it
    const holder = await pool.connect()
    await holder.query('begin')
    await holder.query('select pg_advisory_xact_lock($1)', [ROLLUP_LOCK])
    const app = await buildApp({ database: h.database, settings: defaultSettings({ zone: 'UTC' }) })
    let during: Array<Record<string, unknown>>
    try {
      await app.ready()
      let settled = false
      void app.rollupCalendar.then(() => {
        settled = true
      })
      const answer = await app.inject({ url, headers: { 'x-api-key': key } })
      expect(answer.statusCode).toBe(200)
      during = answer.json()
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect([settled, await calendarZone(pool)]).toEqual([false, 'Europe/Rome'])
    } finally {
      await holder.query('commit')
      holder.release()
    }
    try {
      await app.rollupCalendar
      expect(await calendarZone(pool)).toBe('UTC')
      const after = (await app.inject({ url, headers: { 'x-api-key': key } })).json()
      expect(during.length).toBe(4)
      expectSame(after, during, 'the days of UTC from its days, and from the hours before them')
    } finally {
      await app.close()
      await buildCalendar(pool, 'Europe/Rome')
    }
  })
})
