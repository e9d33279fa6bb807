/**
 * `fill` and `coverage` on the data endpoints, on the fixture's partial days, its two-hour gap and
 * both DST days of 2025 in Europe/Rome. Expectations come from the fixture's own functions and
 * Intl's calendar, never from the service's SQL; JSON, CSV and TXT must say the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GROUP_COLUMNS, GROUP_NAMES } from '../src/catalogue/groups.ts'
import { dstDays, FIXTURE_TIMES, GAP, meterRows, pvValue } from './fixtures/dst-days.ts'
import { type Harness, startHarness } from './harness.ts'
import { local, QUARTER, ROME, served } from './support.ts'

let h: Harness
let key: string

beforeAll(async () => {
  h = await startHarness({ now: () => Date.parse('2025-11-01T12:00:00Z'), data: dstDays })
  key = await h.key(['/data/*'])
})
afterAll(async () => h?.close())

type Row = Record<string, unknown>
const get = (url: string) => h.app.inject({ url, headers: { 'x-api-key': key } })

/** JSON, and the CSV and TXT of the same request parsed back to the same shape. */
async function threeWays(url: string): Promise<Row[]> {
  const json = (await get(url)).json() as Row[]
  for (const [format, separator, eol] of [
    ['csv', ',', '\r\n'],
    ['txt', '\t', '\n'],
  ] as const) {
    const text = (await get(`${url}&data_format=${format}`)).body
    const [head, ...lines] = text.split(eol).filter(Boolean)
    const names = (head as string).split(separator)
    const parsed = lines.map((line) => {
      const cells = line.split(separator)
      return Object.fromEntries(
        names.map((n, i) => {
          const cell = cells[i] as string
          if (n === 'time_15m') return [n, cell]
          if (n === 'tag') return [n, cell === '' ? null : cell]
          return [n, cell === '' ? null : Number(cell)]
        }),
      )
    })
    expect(parsed, format).toEqual(json)
  }
  return json
}

const stored = FIXTURE_TIMES.filter((t) => t < GAP.from || t >= GAP.to)
const isStored = new Set(stored)

/** Quarter hours of each local day in Rome from `first` to `last`, counted by walking UTC quarter hours through Intl. */
function quartersPerLocalDay(first: string, last: string): Map<string, number[]> {
  const days = new Map<string, number[]>()
  const margin = 86_400_000
  for (let t = Date.parse(first) - margin; t < Date.parse(last) + 2 * margin; t += QUARTER) {
    const day = local(t, ROME).date
    const list = days.get(day)
    if (list) list.push(t)
    else days.set(day, [t])
  }
  return days
}

const mean = (values: Array<number | null>) => {
  const present = values.filter((v): v is number => v !== null)
  return present.length ? present.reduce((a, b) => a + b, 0) / present.length : null
}

describe('fill=null and coverage=true with day buckets', () => {
  it('answers every local day, partial, gapped, empty and both DST days, with its share of measured quarter hours', async () => {
    for (const [from, to] of [
      ['2025-03-27', '2025-04-02'],
      ['2025-10-23', '2025-10-28'],
    ] as const) {
      const rows = await threeWays(
        `/data/pv?aggregation=1%20d&start_datetime=${from}&end_datetime=${to}&fill=null&coverage=true`,
      )
      const days = quartersPerLocalDay(from, to)
      const expectedDays = [...days.keys()].filter((d) => d >= from && d <= to)
      expect(rows.map((r) => (r.time_15m as string).slice(0, 10))).toEqual(expectedDays)
      for (const row of rows) {
        const day = (row.time_15m as string).slice(0, 10)
        const quarters = days.get(day) as number[]
        const measured = quarters.filter((t) => isStored.has(t))
        expect(Date.parse(row.time_15m as string), day).toBe(quarters[0])
        expect(row.coverage, day).toBeCloseTo(measured.length / quarters.length, 12)
        GROUP_COLUMNS.pv.forEach((c, i) => {
          const expected = mean(measured.map((t) => pvValue(t, i)))
          if (expected === null) expect(row[c], `${day} ${c}`).toBeNull()
          else expect(row[c] as number, `${day} ${c}`).toBeCloseTo(expected, 9)
        })
      }
      const coverage = Object.fromEntries(rows.map((r) => [(r.time_15m as string).slice(0, 10), r.coverage]))
      if (from.startsWith('2025-03')) {
        // before the data, the first day from 01:00, the gap, the spring change, a whole day, the last hours, after
        expect(coverage).toEqual({
          '2025-03-27': 0,
          '2025-03-28': served(92 / 96),
          '2025-03-29': served(88 / 96),
          '2025-03-30': 1,
          '2025-03-31': 1,
          '2025-04-01': served(8 / 96),
          '2025-04-02': 0,
        })
        expect(days.get('2025-03-30')).toHaveLength(92)
      } else {
        expect(coverage['2025-10-24']).toBe(served(88 / 96))
        expect(coverage['2025-10-26']).toBe(1)
        expect(days.get('2025-10-26')).toHaveLength(100)
        expect(coverage['2025-10-28']).toBe(served(4 / 96))
        expect(coverage['2025-10-23']).toBe(0)
      }
    }
  })

  it('keeps the default shape: no empty days, no coverage field, unless asked', async () => {
    const url = '/data/pv?aggregation=1%20d&start_datetime=2025-03-27&end_datetime=2025-04-02'
    const plain = (await get(url)).json() as Row[]
    expect(plain.map((r) => (r.time_15m as string).slice(0, 10))).toEqual([
      '2025-03-28',
      '2025-03-29',
      '2025-03-30',
      '2025-03-31',
      '2025-04-01',
    ])
    expect(Object.keys(plain[0] as Row)).toEqual(['time_15m', ...GROUP_COLUMNS.pv])
    const covered = await threeWays(`${url}&coverage=true`)
    expect(covered.map((r) => r.time_15m)).toEqual(plain.map((r) => r.time_15m))
    expect(Object.keys(covered[0] as Row)).toEqual(['time_15m', ...GROUP_COLUMNS.pv, 'coverage'])
    expect(covered.map((r) => r.coverage)).toEqual([92 / 96, 88 / 96, 1, 1, 8 / 96].map(served))
  })
})

describe('fill=null and coverage=true below a day', () => {
  it('shows the gap as null quarter hours with coverage 0', async () => {
    const url = '/data/pv?start_datetime=2025-03-29T09:30:00Z&end_datetime=2025-03-29T12:30:00Z'
    const filled = await threeWays(`${url}&fill=null&coverage=true`)
    const quarters = Array.from({ length: 13 }, (_, k) => Date.parse('2025-03-29T09:30:00Z') + k * QUARTER)
    expect(filled.map((r) => Date.parse(r.time_15m as string))).toEqual(quarters)
    for (const [k, row] of filled.entries()) {
      const t = quarters[k] as number
      expect(row.coverage).toBe(isStored.has(t) ? 1 : 0)
      expect(row.tot_pv).toBe(isStored.has(t) ? pvValue(t, 0) : null)
    }
    expect(filled.filter((r) => r.coverage === 0)).toHaveLength(8)
    expect((await get(url)).json()).toHaveLength(5)
  })

  it('counts the 25 hours of the autumn change, the repeated one twice, each whole', async () => {
    const rows = await threeWays(
      '/data/pv?aggregation=1%20h&start_datetime=2025-10-26T00:00:00%2B02:00&end_datetime=2025-10-26T23:59:00%2B01:00&fill=null&coverage=true',
    )
    expect(rows).toHaveLength(25)
    expect(rows.map((r) => r.time_15m)).toContain('2025-10-26T02:00:00+02:00')
    expect(rows.map((r) => r.time_15m)).toContain('2025-10-26T02:00:00+01:00')
    for (const row of rows) {
      const start = Date.parse(row.time_15m as string)
      const inHour = [0, 1, 2, 3].map((k) => start + k * QUARTER).filter((t) => isStored.has(t))
      expect(row.coverage).toBe(served(inHour.length / 4))
    }
  })

  it('covers the 23 hours of the spring change with half hours, 46 of them', async () => {
    const rows = await threeWays(
      '/data/pv?aggregation=30%20m&start_datetime=2025-03-30T00:00:00%2B01:00&end_datetime=2025-03-30T23:59:00%2B02:00&fill=null&coverage=true',
    )
    expect(rows).toHaveLength(46)
    expect(rows.every((r) => r.coverage === 1)).toBe(true)
    expect(rows.map((r) => r.time_15m)).not.toContain('2025-03-30T02:00:00+01:00')
  })
})

describe('fill and coverage per meter', () => {
  it('answers every day of every meter; an empty one holds no sample and no tag', async () => {
    const tags = ['ok', 'estimated', 'suspect']
    const rows = await threeWays(
      `/data/meters?ids=1&ids=2&ids=7&${tags.map((t) => `tag=${t}`).join('&')}&aggregation=1%20d&start_datetime=2025-03-29&end_datetime=2025-03-31&fill=null&coverage=true`,
    )
    const days = quartersPerLocalDay('2025-03-29', '2025-03-31')
    expect(rows.map((r) => [(r.time_15m as string).slice(0, 10), r.meter_id])).toEqual(
      ['2025-03-29', '2025-03-30', '2025-03-31'].flatMap((d) => [1, 2, 7].map((m) => [d, m])),
    )
    const source = meterRows()
    for (const row of rows) {
      const day = (row.time_15m as string).slice(0, 10)
      const own = source.filter((r) => r.meter === row.meter_id && local(r.time, ROME).date === day)
      expect(row.coverage, `${day} ${row.meter_id}`).toBe(served(own.length / (days.get(day) as number[]).length))
      expect(row.count_value).toBe(own.reduce((a, r) => a + (r.count ?? 0), 0))
      if (own.length === 0) {
        expect(row).toMatchObject({ avg_value: null, min_value: null, sum_value: null, count_value: 0, tag: null })
      }
    }
    expect(rows.filter((r) => r.meter_id === 7).every((r) => r.coverage === 0)).toBe(true)
  })
})

describe('fill=null and the row cap', () => {
  it('counts every bucket it answers', async () => {
    const small = await startHarness({ settings: { maxRows: 100 }, data: dstDays })
    try {
      const smallKey = await small.key(['*'])
      // 121 quarter hours, 96 of them stored: within the cap as stored rows, not once filled
      const url = '/data/pv?start_datetime=2025-03-31T00:00:00Z&end_datetime=2025-04-01T06:00:00Z'
      const inject = (u: string) => small.app.inject({ url: u, headers: { 'x-api-key': smallKey } })
      expect((await inject(url)).statusCode).toBe(200)
      const filled = await inject(`${url}&fill=null`)
      expect(filled.statusCode).toBe(422)
      expect(filled.json().detail[0].msg).toMatch(/^The request would return 121 rows, more than the 100 allowed/)
    } finally {
      await small.close()
    }
  })
})

describe('fill and coverage in the OpenAPI document', () => {
  it('are parameters of every data endpoint, and coverage a field of every row', async () => {
    const doc = (await h.app.inject('/openapi.json')).json() as {
      paths: Record<
        string,
        {
          get: {
            parameters: Array<{ name: string; schema: Record<string, unknown> }>
            responses: Record<
              string,
              { content: Record<string, { schema: { items: { properties: Record<string, unknown> } } }> }
            >
          }
        }
      >
    }
    for (const path of ['/data/meters', ...GROUP_NAMES.map((g) => `/data/${g}`)]) {
      const op = doc.paths[path]!.get
      const fill = op.parameters.find((p) => p.name === 'fill')
      const coverage = op.parameters.find((p) => p.name === 'coverage')
      expect(fill?.schema, path).toMatchObject({ enum: ['none', 'null'], default: 'none' })
      expect(coverage?.schema, path).toMatchObject({ type: 'boolean', default: false })
      const row = op.responses['200']!.content['application/json']!.schema.items.properties
      expect(row.coverage, path).toMatchObject({ type: 'number', minimum: 0, maximum: 1 })
    }
  })
})
