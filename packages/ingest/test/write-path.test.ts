import { buildCalendar, type EnergyDatabase, inTransaction, takeMessages } from '@campus/energy-data/live'
import type { TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BASE, ingestDatabase, MINUTE, QUARTER } from './support.ts'

/**
 * The write path's arithmetic against a recomputation of its own: quarter hours kept by what each
 * new sample brings, rollups kept by deltas, writers of one meter taking turns - checked here
 * against statistics computed from what was sent (docs/LIVE.md's definitions, never the
 * service's code), whatever the order, the duplicates, the late register readings and the batches.
 */

const HOUR = 4 * QUARTER
const ZONE = 'Europe/Rome'

/** Deterministic noise: the same samples every run. */
const rand = (i: number) => {
  const x = Math.sin(i * 12.9898 + 78.233) * 43758.5453
  return x - Math.floor(x)
}
const shuffle = <T>(items: T[], seed: number): T[] =>
  items
    .map((item, i) => [rand(i * 31 + seed), item] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, item]) => item)

interface Sent {
  meter: number
  t: number
  /** SenML: `v` (a reading, an increment) or `s` (a register), in the meter's unit. */
  field: 'v' | 's'
  value: number
}

/** The plausible range of each meter's kind (the catalogue's, restated: power -1000..10000 kW, energy 0..2500 kWh, volume 0..100 m3, irradiance -10..1500 W/m2). */
const PLAUSIBLE: Record<number, [number, number]> = {
  900: [-1000, 10_000],
  860: [0, 2500],
  920: [0, 100],
  931: [-10, 1500],
}
const AMOUNTS = new Set([860, 920])

interface Row {
  avg: number
  min: number
  max: number
  sum: number
  count: number
  tag: string
}

/** docs/LIVE.md's quarter hours of what was sent: the first value of an instant stays; a register's increments by time order. */
function recompute(sent: readonly Sent[]): Map<string, Row> {
  const first = new Map<string, Sent>()
  for (const s of sent) if (!first.has(`${s.meter}@${s.t}`)) first.set(`${s.meter}@${s.t}`, s)
  const increments: Array<{ meter: number; t: number; v: number; restarted: boolean }> = []
  const byMeter = new Map<number, Sent[]>()
  for (const s of first.values()) byMeter.set(s.meter, [...(byMeter.get(s.meter) ?? []), s])
  for (const [meter, list] of byMeter) {
    list.sort((a, b) => a.t - b.t)
    let previous: number | undefined
    for (const s of list) {
      if (s.field === 'v') {
        increments.push({ meter, t: s.t, v: s.value, restarted: false })
        continue
      }
      if (previous !== undefined) {
        const restarted = s.value < previous
        increments.push({ meter, t: s.t, v: restarted ? s.value : s.value - previous, restarted })
      }
      previous = s.value
    }
  }
  const quarters = new Map<string, typeof increments>()
  for (const x of increments) {
    const key = `${x.meter}@${Math.floor(x.t / QUARTER) * QUARTER}`
    quarters.set(key, [...(quarters.get(key) ?? []), x])
  }
  return new Map(
    [...quarters].map(([key, xs]) => {
      const meter = Number(key.split('@')[0])
      const [lo, hi] = PLAUSIBLE[meter] as [number, number]
      const values = xs.map((x) => x.v)
      const sum = values.reduce((a, b) => a + b, 0)
      const tag = values.some((v) => v < lo || v > hi) ? 'suspect' : xs.some((x) => x.restarted) ? 'estimated' : 'ok'
      return [
        key,
        {
          avg: sum / values.length,
          min: Math.min(...values),
          max: Math.max(...values),
          sum,
          count: values.length,
          tag,
        },
      ]
    }),
  )
}

const close = (a: number | null, b: number, what: string) =>
  expect(Math.abs((a as number) - b), `${what}: ${a} against ${b}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(b)))

/** The samples of two hours: a power meter every 30 s (some implausible), an energy meter's increments, a water register that restarts, irradiance. */
function campusHours(t0: number): Sent[] {
  const sent: Sent[] = []
  for (let k = 0; k < 240; k++) {
    const t = t0 + k * 30_000
    sent.push({ meter: 900, t, field: 'v', value: k === 77 ? 12_500 : 30 + 20 * rand(k) })
    if (k % 2 === 0) sent.push({ meter: 860, t, field: 'v', value: 0.4 + rand(k + 5000) })
    if (k % 4 === 0) sent.push({ meter: 931, t: t + 1, field: 'v', value: 600 * rand(k + 9000) })
  }
  // a register in m3 read each minute, restarting once at 70 minutes
  let register = 1000
  for (let m = 0; m < 120; m++) {
    register = m === 70 ? 0.3 : register + 0.05 + rand(m + 7000) / 10
    sent.push({ meter: 920, t: t0 + m * MINUTE + 500, field: 's', value: register })
  }
  return sent
}

/** SenML packs of 1 to 25 records in the order given, a fifth of them sent twice. */
function packs(sent: readonly Sent[], seed: number): string[] {
  const out: string[] = []
  for (let k = 0; k < sent.length; ) {
    const size = 1 + Math.floor(rand(k + seed) * 25)
    const records = sent
      .slice(k, k + size)
      .map((s) => ({ n: `urn:campus:meter:${s.meter}`, t: s.t / 1000, [s.field]: s.value }))
    out.push(JSON.stringify(records))
    if (rand(k + seed + 1) < 0.2) out.push(JSON.stringify(records))
    k += size
  }
  return out
}

/** Writes the packs in batches of 1 to 8 messages, each batch one transaction, `writers` at a time on their own connections. */
async function write(database: TestDatabase<EnergyDatabase>, payloads: readonly string[], writers: number) {
  const batches: string[][] = []
  for (let k = 0; k < payloads.length; ) {
    const size = 1 + Math.floor(rand(k + 333) * 8)
    batches.push(payloads.slice(k, k + size))
    k += size
  }
  let next = 0
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < batches.length) {
        const batch = batches[next++] as string[]
        await inTransaction(database.pool, (c) =>
          takeMessages(
            c,
            batch.map((p) => ({ source: 'test', payload: Buffer.from(p), receivedMs: Date.now() })),
          ),
        )
      }
    }),
  )
}

async function storedRows(database: TestDatabase<EnergyDatabase>, meters: number[], from: number, to: number) {
  const { rows } = await database.pool.query<{
    meter_id: number
    t: number
    avg_value: number
    min_value: number
    max_value: number
    sum_value: number
    count_value: number
    tag: string
  }>(
    `select meter_id, extract(epoch from time_15m)::float8 * 1000 as t, avg_value, min_value, max_value, sum_value,
       count_value, tag from data_15m where meter_id = any($1) and time_15m >= $2 and time_15m < $3`,
    [meters, new Date(from), new Date(to)],
  )
  return new Map(rows.map((r) => [`${r.meter_id}@${r.t}`, r]))
}

function expectQuarters(stored: Awaited<ReturnType<typeof storedRows>>, want: Map<string, Row>) {
  expect([...stored.keys()].sort()).toEqual([...want.keys()].sort())
  for (const [key, w] of want) {
    const row = stored.get(key)!
    expect(row.count_value, key).toBe(w.count)
    expect(row.tag, key).toBe(w.tag)
    close(row.sum_value, w.sum, `${key} sum`)
    close(row.avg_value, w.avg, `${key} avg`)
    close(row.min_value, w.min, `${key} min`)
    close(row.max_value, w.max, `${key} max`)
  }
}

/** The rollup rows of a level, recomputed from quarter hours: per meter, period and tag. */
function rollupsOf(want: Map<string, Row>, periodOf: (t: number) => string) {
  const out = new Map<
    string,
    { quarters: number; values: number; valueSum: number; min: number; max: number; sum: number; count: number }
  >()
  for (const [key, r] of want) {
    const [meter, t] = key.split('@').map(Number) as [number, number]
    const k = `${meter}|${periodOf(t)}|${r.tag}`
    const value = AMOUNTS.has(meter) ? r.sum : r.avg
    const o = out.get(k) ?? { quarters: 0, values: 0, valueSum: 0, min: Infinity, max: -Infinity, sum: 0, count: 0 }
    o.quarters++
    o.values++
    o.valueSum += value
    o.min = Math.min(o.min, r.min)
    o.max = Math.max(o.max, r.max)
    o.sum += r.sum
    o.count += r.count
    out.set(k, o)
  }
  return out
}

async function expectRollups(
  database: TestDatabase<EnergyDatabase>,
  level: 'hour' | 'day',
  want: Map<string, Row>,
  periodOf: (t: number) => string,
  meters: number[],
) {
  const { rows } = await database.pool.query<{
    meter_id: number
    start: Date
    tag: string
    quarters: number
    values_n: number
    avg_sum: number
    min_value: number
    max_value: number
    sum_value: number
    count_value: string
  }>('select * from data_rollup where level = $1 and meter_id = any($2) and start >= $3', [
    level,
    meters,
    new Date(BASE - 86_400_000),
  ])
  const expected = rollupsOf(want, periodOf)
  const stored = new Map(rows.map((r) => [`${r.meter_id}|${periodOf(r.start.getTime())}|${r.tag}`, r]))
  expect([...stored.keys()].sort(), level).toEqual([...expected.keys()].sort())
  for (const [key, w] of expected) {
    const r = stored.get(key)!
    expect([r.quarters, r.values_n, Number(r.count_value)], `${level} ${key}`).toEqual([w.quarters, w.values, w.count])
    close(r.avg_sum, w.valueSum, `${level} ${key} values`)
    close(r.sum_value, w.sum, `${level} ${key} sum`)
    close(r.min_value, w.min, `${level} ${key} min`)
    close(r.max_value, w.max, `${level} ${key} max`)
  }
}

const localDay = (t: number) => new Intl.DateTimeFormat('en-CA', { timeZone: ZONE }).format(t)
const utcHour = (t: number) => new Date(Math.floor(t / HOUR) * HOUR).toISOString()

describe('the write path against a recomputation', () => {
  let database: TestDatabase<EnergyDatabase>
  beforeAll(async () => {
    database = (await ingestDatabase()).database
    // the calendar's days and months, kept by the same deltas as the hours
    await buildCalendar(database.pool, ZONE)
  })
  afterAll(() => database?.close())

  const meters = [900, 860, 920, 931]

  it('keeps every quarter hour and rollup exact over shuffled, duplicated, late and register samples', async () => {
    const t0 = BASE + 4 * HOUR
    const sent = campusHours(t0)
    // shuffled across packs: register readings arrive late, between readings already taken
    await write(database, packs(shuffle(sent, 1), 11), 1)
    const want = recompute(sent)
    expectQuarters(await storedRows(database, meters, t0, t0 + 2 * HOUR), want)
    await expectRollups(database, 'hour', want, utcHour, meters)
    await expectRollups(database, 'day', want, localDay, meters)
    // the mirrored column and its rollup: meter 900's mean where its quarter hour is ok
    const mirror = await database.pool.query<{ t: number; tot_dc: number | null }>(
      `select extract(epoch from time_15m)::float8 * 1000 as t, tot_dc from datacenter_1_15m
       where time_15m >= $1 and time_15m < $2`,
      [new Date(t0), new Date(t0 + 2 * HOUR)],
    )
    for (const r of mirror.rows) {
      const w = want.get(`900@${r.t}`)!
      if (w.tag === 'ok') close(r.tot_dc, w.avg, `tot_dc ${r.t}`)
      else expect(r.tot_dc, `tot_dc ${r.t}`).toBeNull()
    }
    const hourly = await database.pool.query<{ start: Date; tot_dc_n: number; tot_dc_sum: number | null }>(
      `select start, tot_dc_n, tot_dc_sum from datacenter_1_rollup where level = 'hour' and start >= $1 and start < $2`,
      [new Date(t0), new Date(t0 + 2 * HOUR)],
    )
    for (const h of hourly.rows) {
      const ok = [...want]
        .filter(
          ([k, r]) =>
            k.startsWith('900@') && r.tag === 'ok' && utcHour(Number(k.split('@')[1])) === utcHour(h.start.getTime()),
        )
        .map(([, r]) => r.avg)
      expect(h.tot_dc_n).toBe(ok.length)
      close(
        h.tot_dc_sum,
        ok.reduce((a, b) => a + b, 0),
        `tot_dc_sum ${h.start.toISOString()}`,
      )
    }
  })

  it('two writers of the same meters and quarter hours at once lose no sample and count none twice', async () => {
    const t0 = BASE + 8 * HOUR
    const sent = campusHours(t0)
    // the same stream, twice, in two orders, by two writers at once: every sample comes twice
    const payloads = [...packs(shuffle(sent, 2), 21), ...packs(shuffle(sent, 3), 31)]
    await write(database, shuffle(payloads, 4), 2)
    // the register's first reading here follows the last one of the first test
    const all = recompute([...campusHours(BASE + 4 * HOUR), ...sent])
    const want = new Map([...all].filter(([key]) => Number(key.split('@')[1]) >= t0))
    expectQuarters(await storedRows(database, meters, t0, t0 + 2 * HOUR), want)
    const samples = await database.pool.query(
      'select count(*)::int as n from meter_samples where at >= $1 and at < $2',
      [new Date(t0), new Date(t0 + 2 * HOUR)],
    )
    expect(samples.rows[0].n).toBe(new Set(sent.map((s) => `${s.meter}@${s.t}`)).size)
    await expectRollups(database, 'hour', all, utcHour, meters)
  })

  it('a batch of thousands of samples, some already stored, stores the others once and counts them right', async () => {
    // twelve hours: a batch this large is first inserted without checking each row (sample-writes.ts)
    const t0 = BASE + 12 * HOUR
    const sent = Array.from({ length: 6 }, (_, j) => campusHours(t0 + j * 2 * HOUR)).flat()
    const keys = new Set(sent.map((s) => `${s.meter}@${s.t}`))
    expect(keys.size).toBeGreaterThan(3000)
    // a third of it first, in small batches; then all of it in one transaction
    const first = shuffle(sent, 5).slice(0, Math.floor(sent.length / 3))
    await write(database, packs(first, 41), 1)
    const whole = packs(shuffle(sent, 6), 51)
    const result = await inTransaction(database.pool, (c) =>
      takeMessages(
        c,
        whole.map((p) => ({ source: 'test', payload: Buffer.from(p), receivedMs: Date.now() })),
      ),
    )
    const before = new Set(first.map((s) => `${s.meter}@${s.t}`)).size
    expect(result.samples).toBe(keys.size - before)
    expect(result.messages.reduce((a, m) => a + m.samples, 0)).toBe(keys.size - before)
    expect(result.samples + result.duplicates).toBe(whole.reduce((a, p) => a + JSON.parse(p).length, 0))
    const all = recompute([...campusHours(BASE + 4 * HOUR), ...campusHours(BASE + 8 * HOUR), ...sent])
    const want = new Map([...all].filter(([key]) => Number(key.split('@')[1]) >= t0))
    expectQuarters(await storedRows(database, meters, t0, t0 + 12 * HOUR), want)
    await expectRollups(database, 'hour', all, utcHour, meters)
    await expectRollups(database, 'day', all, localDay, meters)

    // the next twelve hours in one batch, none stored before: every sample taken, each counted once
    const t1 = t0 + 12 * HOUR
    const next = Array.from({ length: 6 }, (_, j) => campusHours(t1 + j * 2 * HOUR)).flat()
    const taken = await inTransaction(database.pool, (c) =>
      takeMessages(
        c,
        packs(next, 61).map((p) => ({ source: 'test', payload: Buffer.from(p), receivedMs: Date.now() })),
      ),
    )
    expect(taken.samples).toBe(new Set(next.map((s) => `${s.meter}@${s.t}`)).size)
    const everything = recompute([...campusHours(BASE + 4 * HOUR), ...campusHours(BASE + 8 * HOUR), ...sent, ...next])
    expectQuarters(
      await storedRows(database, meters, t1, t1 + 12 * HOUR),
      new Map([...everything].filter(([key]) => Number(key.split('@')[1]) >= t1)),
    )
    await expectRollups(database, 'day', everything, localDay, meters)
  })
})
