/**
 * Virtual meters, costs and emissions recomputed from the quarter hours this file wrote
 * (`fixtures/priced.ts`), its own tariff and emission files and Intl's calendar, never the
 * service's modules or SQL: band edges (07:45, and 02:30 inside the hour repeated on 26 October),
 * the DST day, a validity change on the 22nd, a correction imported over two days, an hourly
 * series of factors, a water tariff that ends (null, never 0), a virtual meter with a missing
 * input, negative remainders.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { emissionsImport, tariffsImport } from '../../src/commands/rates.ts'
import { virtualCreate } from '../../src/commands/virtual-meters.ts'
import { GAP_880, HALF, PRICED_TIMES, priced, pvAt, tagAt, valueAt, writePriced } from '../fixtures/priced.ts'
import { type Harness, startHarness } from '../harness.ts'
import { expectPrinted, local as intlLocal, listLine, QUARTER, QUARTER_HOURS, ROME, tableRows } from '../support.ts'

/** Intl's calendar, asked once per instant (the recomputation asks it for every meter). */
const seen = new Map<number, ReturnType<typeof intlLocal>>()
function local(t: number, zone = ROME) {
  let found = seen.get(t)
  if (!found) {
    found = intlLocal(t, zone)
    seen.set(t, found)
  }
  return found
}

let h: Harness
let key: string
const dir = mkdtempSync(join(tmpdir(), 'rates-'))

/** The files, as an operator writes them. */
const TARIFF = `commodity,valid_from,valid_to,days,from_time,to_time,price,currency
electricity,2025-10-01,2025-10-22,mon-fri,00:00,08:00,0.18,EUR
electricity,2025-10-01,2025-10-22,mon-fri,08:00,19:00,0.27,EUR
electricity,2025-10-01,2025-10-22,mon-fri,19:00,24:00,0.18,EUR
electricity,2025-10-01,2025-10-22,sat,00:00,24:00,0.15,EUR
electricity,2025-10-01,2025-10-22,sun,00:00,24:00,0.12,EUR
electricity,2025-10-22,2025-11-01,all,00:00,02:30,0.1,EUR
electricity,2025-10-22,2025-11-01,all,02:30,07:45,0.2,EUR
electricity,2025-10-22,2025-11-01,all,07:45,24:00,0.3,EUR
water,2025-10-01,2025-10-27,all,00:00,24:00,2.1,EUR
`
const CORRECTION = `commodity,valid_from,valid_to,days,from_time,to_time,price,currency
electricity,2025-10-24,2025-10-26,all,00:00,24:00,0.5,EUR
`
const FACTORS = `commodity,valid_from,valid_to,kg_co2e_per_unit
electricity,2025-10-01,2025-11-01,0.25
water,2025-10-01,2025-11-01,0.3
`
const HOURLY_START = Date.parse('2025-10-25T00:00:00Z')
const hourlyFactor = (i: number) => Math.round((0.2 + 0.01 * (i % 24)) * 1000) / 1000
const HOURLY = `commodity,time,kg_co2e_per_unit\n${Array.from(
  { length: 48 },
  (_, i) => `electricity,${new Date(HOURLY_START + i * 3_600_000).toISOString()},${hourlyFactor(i)}`,
).join('\n')}\n`

/** This file's own reading of its tariffs: versions newest first, each a span and its bands. */
interface OwnBand {
  from: string
  to: string
  days: string[]
  start: number
  end: number
  value: number
}
const ALL = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
const WEEK = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri']
const band = (from: string, to: string, days: string[], start: string, end: string, value: number): OwnBand => {
  const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3))
  return { from, to, days, start: minutes(start), end: minutes(end), value }
}
const tariffs: Record<string, OwnBand[][]> = {
  // newest first: the correction, then the tariff
  electricity: [
    [band('2025-10-24', '2025-10-26', ALL, '00:00', '24:00', 0.5)],
    [
      band('2025-10-01', '2025-10-22', WEEK, '00:00', '08:00', 0.18),
      band('2025-10-01', '2025-10-22', WEEK, '08:00', '19:00', 0.27),
      band('2025-10-01', '2025-10-22', WEEK, '19:00', '24:00', 0.18),
      band('2025-10-01', '2025-10-22', ['Sat'], '00:00', '24:00', 0.15),
      band('2025-10-01', '2025-10-22', ['Sun'], '00:00', '24:00', 0.12),
      band('2025-10-22', '2025-11-01', ALL, '00:00', '02:30', 0.1),
      band('2025-10-22', '2025-11-01', ALL, '02:30', '07:45', 0.2),
      band('2025-10-22', '2025-11-01', ALL, '07:45', '24:00', 0.3),
    ],
  ],
  water: [[band('2025-10-01', '2025-10-27', ALL, '00:00', '24:00', 2.1)]],
}
/** Versions as the imports below number them. */
const TARIFF_VERSION = { electricity: [3, 1], water: [1] } as Record<string, number[]>

function bandValue(versions: OwnBand[][], ids: number[], t: number): { value: number; version: number } | null {
  const l = local(t, ROME)
  const minute = l.hour * 60 + l.minute
  for (const [i, bands] of versions.entries()) {
    const span = bands.some((b) => l.date >= b.from && l.date < b.to)
    if (!span) continue
    const found = bands.find(
      (b) => l.date >= b.from && l.date < b.to && b.days.includes(l.weekday) && minute >= b.start && minute < b.end,
    )
    if (found) return { value: found.value, version: ids[i] as number }
  }
  return null
}
const priceAt = (commodity: string, t: number) =>
  bandValue(tariffs[commodity] as OwnBand[][], TARIFF_VERSION[commodity] as number[], t)
function factorAt(commodity: string, t: number): { value: number; version: number } | null {
  // the hourly series (version 4) is newer than the factors by validity (version 2)
  if (commodity === 'electricity' && t >= HOURLY_START && t < HOURLY_START + 48 * 3_600_000) {
    return { value: hourlyFactor(Math.floor((t - HOURLY_START) / 3_600_000)), version: 4 }
  }
  return { value: commodity === 'electricity' ? 0.25 : 0.3, version: 2 }
}

/** The virtual meters this file creates, with its own reading of their formulas. */
const VIRTUAL = {
  1001: { formula: '860 - 870 - 880', terms: { 860: 1, 870: -1, 880: -1 }, commodity: 'electricity', amount: true },
  1002: { formula: '920 - 921 - 922', terms: { 920: 1, 921: -1, 922: -1 }, commodity: 'water', amount: true },
  1003: { formula: '0.5*900 + 901', terms: { 900: 0.5, 901: 1 }, commodity: null, amount: false },
} as const
const COMMODITY: Record<number, string | null> = {
  860: 'electricity',
  870: 'electricity',
  880: 'electricity',
  920: 'water',
  921: 'water',
  922: 'water',
  900: null,
  901: null,
}
const SEVERITY = ['ok', 'estimated', 'interpolated', 'suspect', 'invalid']

/** A quarter hour as this file knows it: value and tag, for real and virtual meters. */
function quarter(meter: number, t: number): { value: number; tag: string } | null {
  const virtual = VIRTUAL[meter as keyof typeof VIRTUAL]
  if (!virtual) {
    const value = valueAt(meter, t)
    return value === null ? null : { value, tag: tagAt(meter, t) }
  }
  let value = 0
  let severity = 0
  for (const [input, coefficient] of Object.entries(virtual.terms)) {
    const q = quarter(Number(input), t)
    if (!q) return null
    value += coefficient * q.value
    severity = Math.max(severity, SEVERITY.indexOf(q.tag))
  }
  return { value, tag: virtual.amount && value < 0 ? 'suspect' : (SEVERITY[severity] as string) }
}
const commodityOf = (meter: number) =>
  meter in VIRTUAL ? VIRTUAL[meter as keyof typeof VIRTUAL].commodity : (COMMODITY[meter] ?? null)

interface Expected {
  value: number
  cost: number | null
  costVersions: string | null
  co2: number | null
  co2Versions: string | null
  quarters: number
}

/** The buckets of `meter` over the fixture: key (see `bucketKey`) to expectation, tags `tags`. */
function expected(meter: number, aggregation: '15 m' | '1 h' | '1 d', tags: string[]): Map<string, Expected> {
  const buckets = new Map<
    string,
    {
      value: number
      costs: Array<number | null>
      co2s: Array<number | null>
      cv: Set<number>
      ev: Set<number>
      n: number
    }
  >()
  const commodity = commodityOf(meter)
  for (const t of PRICED_TIMES) {
    const q = quarter(meter, t)
    if (!q || !tags.includes(q.tag)) continue
    const key = bucketKey(aggregation, t)
    const b = buckets.get(key) ?? { value: 0, costs: [], co2s: [], cv: new Set(), ev: new Set(), n: 0 }
    b.value += q.value
    b.n++
    const price = commodity ? priceAt(commodity, t) : null
    const factor = commodity ? factorAt(commodity, t) : null
    b.costs.push(price ? q.value * price.value : null)
    b.co2s.push(factor ? q.value * factor.value : null)
    if (price) b.cv.add(price.version)
    if (factor) b.ev.add(factor.version)
    buckets.set(key, b)
  }
  const total = (xs: Array<number | null>) =>
    xs.some((x) => x === null) ? null : (xs as number[]).reduce((a, b) => a + b, 0)
  const versions = (s: Set<number>) => (s.size ? [...s].sort((a, b) => a - b).join(',') : null)
  return new Map(
    [...buckets].map(([k, b]) => [
      k,
      {
        value: b.value / b.n,
        cost: total(b.costs),
        costVersions: versions(b.cv),
        co2: total(b.co2s),
        co2Versions: versions(b.ev),
        quarters: b.n,
      },
    ]),
  )
}

/** A bucket's label as the API prints it in Europe/Rome (a day by its date). */
function bucketKey(aggregation: '15 m' | '1 h' | '1 d', t: number): string {
  const l = local(t, ROME)
  if (aggregation === '15 m') return l.iso
  if (aggregation === '1 h') return `${l.iso.slice(0, 13)}:00:00${l.iso.slice(19)}`
  return l.date
}

function closeTo(actual: unknown, expected: number | null, what: string) {
  if (expected === null) {
    expect(actual, what).toBeNull()
    return
  }
  expect(typeof actual, what).toBe('number')
  expect(Math.abs((actual as number) - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(
    1e-9 * Math.max(1, Math.abs(expected)),
  )
}

async function read(query: string): Promise<Array<Record<string, unknown>>> {
  const res = await h.app.inject({ url: `/data/meters?${query}`, headers: { 'x-api-key': key } })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

/** The dashboard's clock: a Friday morning, the 24th, in the fixture's second half. */
const NOW = Date.parse('2025-10-24T10:00:00Z')
const WINDOW = 'start_datetime=2025-10-18&end_datetime=2025-10-28%2023:45:00'
const file = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

beforeAll(async () => {
  h = await startHarness({ data: priced, now: () => NOW })
  key = await h.key(['*'])
  const { pool } = h.database
  // versions 1 to 4, in this order
  await tariffsImport(pool, file('tariff.csv', TARIFF), ROME)
  await emissionsImport(pool, file('factors.csv', FACTORS), ROME)
  await tariffsImport(pool, file('correction.csv', CORRECTION), ROME)
  await emissionsImport(pool, file('hourly.csv', HOURLY), ROME)
  // the virtual meters get the first half from what is stored, the rest as it is written
  for (const [id, v] of Object.entries(VIRTUAL))
    await virtualCreate(pool, { id, name: `Virtual ${id}`, formula: v.formula })
  await writePriced(h.database, HALF, Number.POSITIVE_INFINITY)
})
afterAll(async () => h?.close())

const ALL_METERS = [860, 880, 920, 922, 900, 1001, 1002, 1003]
/** Water alone: its prices hold for whole hours, so its buckets of an hour or more are priced from the hourly rollups. */
const WATER_METERS = [920, 922, 1002]

describe('the cost and emissions of every bucket, recomputed from the quarter hours', () => {
  for (const [aggregation, METERS] of [
    ['15 m', ALL_METERS],
    ['1 h', ALL_METERS],
    ['1 d', ALL_METERS],
    ['1 h', WATER_METERS],
    ['1 d', WATER_METERS],
  ] as const) {
    it(`at ${aggregation} of ${METERS.join(', ')}, over band edges, the DST day, a validity change and a correction`, async () => {
      const tags = ['ok', 'estimated']
      const rows = await read(
        `${METERS.map((m) => `ids=${m}`).join('&')}&${tags.map((t) => `tag=${t}`).join('&')}&aggregation=${encodeURIComponent(aggregation)}&cost=true&co2=true&${WINDOW}`,
      )
      let compared = 0
      for (const meter of METERS) {
        const want = expected(meter, aggregation, tags)
        const got = rows.filter((r) => r.meter_id === meter)
        expect(got.length, `buckets of ${meter}`).toBe(want.size)
        for (const row of got) {
          const label = aggregation === '1 d' ? (row.time_15m as string).slice(0, 10) : (row.time_15m as string)
          const w = want.get(label)
          if (!w) throw new Error(`unexpected bucket ${label} of ${meter}`)
          const what = `${meter} ${label}`
          const isAmount = commodityOf(meter) !== null
          closeTo(isAmount && aggregation === '15 m' ? row.sum_value : row.avg_value, w.value, `${what} value`)
          closeTo(row.cost_value, w.cost, `${what} cost`)
          closeTo(row.co2_value, w.co2, `${what} co2`)
          expect(row.cost_versions, `${what} tariff versions`).toBe(w.costVersions)
          expect(row.co2_versions, `${what} emission versions`).toBe(w.co2Versions)
          expect(row.cost_currency, what).toBe(w.cost === null ? null : 'EUR')
          compared++
        }
      }
      expect(compared).toBeGreaterThan(METERS.length)
    })
  }

  it('is null, never 0, where a quarter hour has no tariff: the water tariff ends with 26 October', async () => {
    const rows = await read(`ids=920&aggregation=1%20d&cost=true&co2=true&${WINDOW}`)
    const day = (date: string) => rows.find((r) => (r.time_15m as string).startsWith(date))
    expect(day('2025-10-26')?.cost_value).toEqual(expect.any(Number))
    expect(day('2025-10-27')?.cost_value).toBeNull()
    expect(day('2025-10-27')?.cost_currency).toBeNull()
    expect(day('2025-10-27')?.co2_value).toEqual(expect.any(Number))
  })

  it('prices the repeated hour of the DST day by the band of its wall-clock time, each of its two hours', async () => {
    // 02:00-02:30 local at 0.1, 02:30-03:00 at 0.2, twice: +02:00, then +01:00
    const rows = await read(`ids=860&cost=true&start_datetime=2025-10-26T00:00:00Z&end_datetime=2025-10-26T01:45:00Z`)
    expect(rows.map((r) => r.time_15m)).toEqual([
      '2025-10-26T02:00:00+02:00',
      '2025-10-26T02:15:00+02:00',
      '2025-10-26T02:30:00+02:00',
      '2025-10-26T02:45:00+02:00',
      '2025-10-26T02:00:00+01:00',
      '2025-10-26T02:15:00+01:00',
      '2025-10-26T02:30:00+01:00',
      '2025-10-26T02:45:00+01:00',
    ])
    const prices = rows.map((r) => (r.cost_value as number) / (r.sum_value as number))
    for (const [i, p] of prices.entries()) expect(p, String(i)).toBeCloseTo([0.1, 0.1, 0.2, 0.2][i % 4] as number, 12)
  })

  it('reads the hourly rollups where every price holds for whole hours, else the quarter hours', async () => {
    // a quarter hour written by plain SQL is in no rollup until its hour is refreshed
    const t = new Date('2025-10-30T10:00:00Z')
    await h.database.pool.query(
      "insert into data_15m (time_15m, meter_id, sum_value, tag) values ($1, 920, 1, 'ok'), ($1, 860, 1, 'ok')",
      [t],
    )
    const day = 'aggregation=1%20d&co2=true&start_datetime=2025-10-30&end_datetime=2025-10-30'
    // water's factor holds all day: from the hours, which do not hold it yet
    expect(await read(`ids=920&${day}`)).toEqual([])
    // electricity's tariff changes at 02:30 and 07:45: from the quarter hours
    expect((await read(`ids=860&${day}&cost=true`)).map((r) => [r.co2_value, r.cost_value])).toEqual([[0.25, 0.3]])
  })

  it("adds its fields and changes none of the contract's, at every aggregation", async () => {
    const CONTRACT = ['time_15m', 'meter_id', 'avg_value', 'min_value', 'max_value', 'sum_value', 'count_value', 'tag']
    for (const aggregation of ['15 m', '1 h', '1 d']) {
      const query = `${ALL_METERS.map((m) => `ids=${m}`).join('&')}&aggregation=${encodeURIComponent(aggregation)}&${WINDOW}`
      const plain = await read(query)
      const priced = await read(`${query}&cost=true&co2=true`)
      expect(plain.length, aggregation).toBeGreaterThan(ALL_METERS.length)
      expect(priced.length, aggregation).toBe(plain.length)
      plain.forEach((row, i) => {
        for (const field of CONTRACT) {
          const [want, got] = [row[field], priced[i]?.[field]]
          const what = `${aggregation} ${row.time_15m} ${row.meter_id} ${field}`
          // a priced day is read from the hours, a plain one from the days: the same sums in another order
          if (typeof want === 'number' && !Number.isInteger(want)) closeTo(got, want, what)
          else expect(got, what).toBe(want)
        }
      })
    }
  })

  it('leaves the answer as the contract has it without cost and co2', async () => {
    const [row] = await read(`ids=860&${WINDOW}`)
    expect(Object.keys(row ?? {})).toEqual([
      'time_15m',
      'meter_id',
      'avg_value',
      'min_value',
      'max_value',
      'sum_value',
      'count_value',
      'tag',
    ])
  })
})

describe('the reports', () => {
  async function report(path: string): Promise<string> {
    const res = await h.app.inject({ url: `${path}&lang=en`, headers: { accept: 'text/markdown' } })
    expect(res.statusCode, res.body).toBe(200)
    return res.body
  }
  /** Per local day: the sum of amount(t) x price(t); null where a quarter hour holding an amount has no price. */
  function perDay(amount: (t: number) => number, commodity: string) {
    const days = new Map<string, number | null>()
    for (const t of PRICED_TIMES) {
      const day = local(t).date
      const price = priceAt(commodity, t)
      const before = days.has(day) ? (days.get(day) as number | null) : 0
      days.set(day, before === null || price === null ? null : before + amount(t) * price.value)
    }
    return days
  }
  const window = 'start_datetime=2025-10-19&end_datetime=2025-10-27'

  it('/report/pv values the energy produced at the tariff in force, day by day and in all', async () => {
    const text = await report(`/report/pv?${window}`)
    const want = perDay((t) => pvAt(t) * QUARTER_HOURS, 'electricity')
    const rows = tableRows(text, 'By day')
    expect(rows.map((r) => r[0])).toEqual([
      '2025-10-19',
      '2025-10-20',
      '2025-10-21',
      '2025-10-22',
      '2025-10-23',
      '2025-10-24',
      '2025-10-25',
      '2025-10-26',
      '2025-10-27',
    ])
    for (const row of rows)
      expectPrinted(row[row.length - 1] as string, want.get(row[0] as string) ?? null, `value of ${row[0]}`)
    const total = [...rows].reduce((s, r) => s + (want.get(r[0] as string) as number), 0)
    expectPrinted(listLine(text, 'Value of the energy produced'), total, 'value')
    expect(listLine(text, 'Value of the energy produced')).toContain(
      'EUR (tot_pv: sum of kW x 0.25 h x the electricity price in force at each quarter hour (tariffs: 1, 3)',
    )
  })

  it('/report/water costs each day of the main site; a day without a tariff is n/a, and so is the total', async () => {
    const text = await report(`/report/water?${window}`)
    const want = perDay((t) => valueAt(920, t) as number, 'water')
    const rows = tableRows(text, 'By day')
    expect(rows).toHaveLength(9)
    for (const row of rows)
      expectPrinted(row[row.length - 1] as string, want.get(row[0] as string) ?? null, `cost of ${row[0]}`)
    expect(rows[rows.length - 1]?.at(-1)).toBe('n/a')
    expectPrinted(listLine(text, 'Main site cost'), null, 'total cost')
  })
})

describe('the dashboard', () => {
  it("shows today's and this month's cost of the campus: its main meters at the tariffs in force", async () => {
    const res = await h.app.inject({ url: '/dashboard?lang=en' })
    expect(res.statusCode).toBe(200)
    // the campus: the main panels (860, 870, 880; 890 has no data here) and the main water meter, ok quarter hours
    const cost = (from: string, commodity: string, meters: number[]) => {
      let total = 0
      for (const t of PRICED_TIMES) {
        if (local(t).date < from || t >= NOW) continue
        for (const m of meters) {
          const q = quarter(m, t)
          if (q && q.tag === 'ok') total += q.value * (priceAt(commodity, t)?.value as number)
        }
      }
      return total
    }
    const money = (x: number) =>
      new Intl.NumberFormat('en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(x)
    for (const [label, from] of [
      ['today', '2025-10-24'],
      ['this month', '2025-10-01'],
    ] as const) {
      const electricity = cost(from, 'electricity', [860, 870, 880])
      const water = cost(from, 'water', [920])
      expect(res.body).toContain(
        `<dt>${label}</dt><dd><strong>${money(electricity + water)} EUR</strong> (electricity ${money(electricity)} EUR, water ${money(water)} EUR)</dd>`,
      )
    }
  })
})

describe('a virtual meter', () => {
  it('has a quarter hour only where every input has one, and coverage says so', async () => {
    const hours = await read(
      `ids=1001&aggregation=1%20h&coverage=true&fill=null&tag=ok&tag=estimated&start_datetime=2025-10-20T09:00:00Z&end_datetime=2025-10-20T12:00:00Z`,
    )
    expect(hours.map((r) => r.coverage)).toEqual([1, 0, 0, 1])
    expect(hours.map((r) => r.count_value)).toEqual([null, 0, 0, null])
    const quarters = await read(
      `ids=1001&tag=ok&tag=estimated&start_datetime=2025-10-20T09:00:00Z&end_datetime=2025-10-20T12:45:00Z`,
    )
    const missing = PRICED_TIMES.filter((t) => t >= GAP_880.from && t < GAP_880.to).map((t) => local(t).iso)
    for (const row of quarters) expect(missing).not.toContain(row.time_15m)
    expect(quarters).toHaveLength(16 - missing.length)
  })

  it('gets the missing quarter hours once the missing input is written, through the one write path', async () => {
    const values = await read(
      `ids=1001&aggregation=1%20h&tag=ok&tag=estimated&start_datetime=2025-10-20T10:00:00Z&end_datetime=2025-10-20T11:00:00Z`,
    )
    expect(values).toEqual([])
    const filled = PRICED_TIMES.filter((t) => t >= GAP_880.from && t < GAP_880.to)
    const v = (t: number) => 2 + Math.sin(t / QUARTER / 3)
    const { writeQuarters, emptyMeterQuarters } = await import('../../src/repositories/quarter-writes.ts')
    const { inTransaction } = await import('../../src/repositories/transaction.ts')
    const rows = emptyMeterQuarters()
    for (const t of filled) {
      rows.t.push(t)
      rows.meterId.push(880)
      rows.avg.push(null)
      rows.min.push(null)
      rows.max.push(null)
      rows.sum.push(v(t))
      rows.count.push(1)
      rows.tag.push('ok')
    }
    await inTransaction(h.database.pool, (client) => writeQuarters(client, { meters: rows, existing: 'replace' }))
    const after = await read(
      `ids=1001&aggregation=1%20h&tag=ok&tag=estimated&totals=true&start_datetime=2025-10-20T10:00:00Z&end_datetime=2025-10-20T11:00:00Z`,
    )
    expect(after).toHaveLength(2)
    for (const row of after) {
      const start = Date.parse(row.time_15m as string)
      const own = [0, 1, 2, 3].map((i) => start + i * QUARTER)
      const want = own.reduce((s, t) => s + (valueAt(860, t) as number) - (valueAt(870, t) as number) - v(t), 0)
      closeTo(row.total_value, want, row.time_15m as string)
    }
  })

  it('tags a negative remainder suspect: left out of the default answer, there with tag=suspect', async () => {
    const negative = PRICED_TIMES.filter((t) => (quarter(1002, t)?.value ?? 0) < 0)
    expect(negative.length).toBeGreaterThan(5)
    const ok = await read(`ids=1002&${WINDOW}`)
    const suspect = await read(`ids=1002&tag=suspect&${WINDOW}`)
    expect(suspect.map((r) => r.time_15m)).toEqual(negative.map((t) => local(t).iso))
    for (const row of suspect) expect(row.sum_value as number).toBeLessThan(0)
    expect(ok.some((r) => negative.map((t) => local(t).iso).includes(r.time_15m as string))).toBe(false)
  })

  it('holds its value in the column of its kind, the statistics it cannot derive null', async () => {
    const [amount] = await read(`ids=1002&start_datetime=2025-10-18T00:15:00Z&end_datetime=2025-10-18T00:15:00Z`)
    expect(amount).toMatchObject({ avg_value: null, min_value: null, max_value: null, count_value: null, tag: 'ok' })
    closeTo(amount?.sum_value, quarter(1002, Date.parse('2025-10-18T00:15:00Z'))?.value ?? null, 'sum_value')
    const [mean] = await read(`ids=1003&start_datetime=2025-10-18T00:15:00Z&end_datetime=2025-10-18T00:15:00Z`)
    expect(mean).toMatchObject({ min_value: null, max_value: null, sum_value: null, count_value: null })
    closeTo(mean?.avg_value, quarter(1003, Date.parse('2025-10-18T00:15:00Z'))?.value ?? null, 'avg_value')
  })

  it('is listed by /metadata/meters/ with its formula; a real meter answers as before', async () => {
    const res = await h.app.inject({ url: '/metadata/meters/', headers: { 'x-api-key': key } })
    const meters = res.json() as Array<Record<string, unknown>>
    expect(meters.find((m) => m.id === 1002)).toEqual({
      id: 1002,
      description: '1002) Virtual 1002',
      notes: null,
      date_from: '2019-11-04T00:00:00.000Z',
      date_to: null,
      datalogger_id: '',
      type_id: 'brick:Water_Meter',
      unit_id: 'unit:M3',
      quantity_id: 'quantitykind:Volume',
      virtual: true,
      formula: '920 - 921 - 922',
    })
    expect(Object.keys(meters.find((m) => m.id === 920) ?? {})).not.toContain('virtual')
  })
})
