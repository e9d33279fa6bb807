/**
 * Every group column that mirrors a meter carries that meter's unit: read as a client would, from
 * the OpenAPI row schemas, `/metadata/meters` and the `/data` rows of a seeded day (the mirror is
 * the same reading: the column's values are the meter's quarter-hour values).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, seeded, startHarness } from '../harness.ts'

interface ColumnSchema {
  description: string
  'x-unit': string
  'x-quantity-kind': string
  'x-combination': 'mean' | 'sum'
  'x-meter'?: number
}
interface Meter {
  id: number
  unit_id: string | null
  quantity_id: string | null
}

let h: Harness
let key: string

beforeAll(async () => {
  h = await startHarness({
    data: seeded({ from: '2025-05-25', to: '2025-06-08', seed: '9' }),
    now: () => Date.parse('2025-06-09T12:00:00Z'),
  })
  key = await h.key(['*'])
})
afterAll(async () => h?.close())

const get = async <T>(url: string) => (await h.app.inject({ url, headers: { 'x-api-key': key } })).json() as T

describe('columns that mirror a meter', () => {
  it('carry the unit and quantity of the meter their values are', async () => {
    const doc = await get<{
      paths: Record<
        string,
        { get: { responses: { 200: { content: Record<string, { schema: Record<string, unknown> }> } } } }
      >
    }>('/openapi.json')
    const meters = new Map((await get<Meter[]>('/metadata/meters/')).map((m) => [m.id, m]))
    const mirrors: Array<{ group: string; column: string; schema: ColumnSchema }> = []
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/data/') || path === '/data/meters') continue
      const content = item.get.responses[200].content
      const row = (content['application/json']!.schema as { items: { properties: Record<string, ColumnSchema> } }).items
        .properties
      const header = (content['text/csv']!.schema as { description: string }).description
      for (const [column, schema] of Object.entries(row)) {
        if (column === 'time_15m' || column === 'coverage') continue
        // every column says its unit, in the schema and in the CSV header's documentation
        expect(schema['x-unit'], `${path} ${column}`).toMatch(/^unit:/)
        expect(schema['x-quantity-kind'], `${path} ${column}`).toMatch(/^quantitykind:/)
        expect(schema.description, `${path} ${column}`).toContain(`(${schema['x-unit']})`)
        expect(header, `${path} ${column}`).toMatch(new RegExp(`\`${column}\` \\S+`))
        if (schema['x-meter'] !== undefined) mirrors.push({ group: path.slice('/data/'.length), column, schema })
      }
    }
    expect(mirrors.length).toBeGreaterThanOrEqual(20)
    for (const { group, column, schema } of mirrors) {
      const meter = meters.get(schema['x-meter'] as number)
      expect(meter, `${group}.${column} mirrors meter ${schema['x-meter']}`).toBeDefined()
      expect(schema['x-unit'], `${group}.${column}`).toBe(meter!.unit_id)
      expect(schema['x-quantity-kind'], `${group}.${column}`).toBe(meter!.quantity_id)
      expect(schema.description, `${group}.${column}`).toContain(`Mirrors meter ${meter!.id}`)
    }

    // the mirror is real: at every quarter hour the meter read cleanly, the column holds the meter's value
    const window = 'start_datetime=2025-06-01T00:00:00Z&end_datetime=2025-06-01T23:45:00Z'
    for (const { group, column, schema } of mirrors) {
      const rows = await get<Array<Record<string, unknown>>>(`/data/${group}?${window}`)
      const readings = await get<Array<{ time_15m: string; avg_value: number | null; sum_value: number | null }>>(
        `/data/meters?ids=${schema['x-meter']}&${window}`,
      )
      // a volume meter's quarter-hour value is its volume, sum_value; a power or weather meter's its mean
      const quarterValue = (r: (typeof readings)[number]) =>
        schema['x-unit'] === 'unit:M3' ? r.sum_value : r.avg_value
      const byTime = new Map(rows.map((r) => [r.time_15m as string, r[column]]))
      const compared = readings.filter((r) => byTime.has(r.time_15m) && byTime.get(r.time_15m) !== null)
      expect(compared.length, `${group}.${column}`).toBeGreaterThan(80)
      for (const r of compared) expect(byTime.get(r.time_15m), `${group}.${column} ${r.time_15m}`).toBe(quarterValue(r))
    }
  })

  it('give one number with their meter at every aggregation: the same quarter hours, each weighing the same', async () => {
    const doc = await get<{
      paths: Record<
        string,
        {
          get: {
            responses: {
              200: { content: Record<string, { schema: { items: { properties: Record<string, ColumnSchema> } } }> }
            }
          }
        }
      >
    }>('/openapi.json')
    const window = 'start_datetime=2025-05-25T00:00:00Z&end_datetime=2025-06-07T23:45:00Z'
    let compared = 0
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/data/') || path === '/data/meters' || path === '/data/centrali_frigo') continue
      const row = item.get.responses[200].content['application/json']!.schema.items.properties
      for (const [column, schema] of Object.entries(row)) {
        if (schema['x-meter'] === undefined) continue
        for (const aggregation of ['1 h', '1 d', '1 mon']) {
          const q = `aggregation=${encodeURIComponent(aggregation)}&${window}`
          const columnRows = await get<Array<Record<string, unknown>>>(`${path}?${q}`)
          const meterRows = await get<Array<{ time_15m: string; avg_value: number | null }>>(
            `/data/meters?ids=${schema['x-meter']}&${q}`,
          )
          const columnBuckets = new Map(
            columnRows.filter((r) => r[column] !== null).map((r) => [r.time_15m as string, r[column] as number]),
          )
          // the meter's buckets (tag ok, the default) are exactly the column's buckets holding a value
          expect([...columnBuckets.keys()], `${path} ${column} ${aggregation}`).toEqual(
            meterRows.map((r) => r.time_15m),
          )
          for (const r of meterRows) {
            const mirrored = columnBuckets.get(r.time_15m) as number
            expect(
              Math.abs(mirrored - (r.avg_value as number)),
              `${path} ${column} ${aggregation} ${r.time_15m}`,
            ).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(mirrored)))
            compared++
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(5000)
  })

  it('total a bucket exactly with totals=true, whatever reading is missing', async () => {
    const window = 'start_datetime=2025-05-25T00:00:00Z&end_datetime=2025-06-07T23:45:00Z&timezone=Europe/Rome'
    const day = (time: string) => time.slice(0, 10)
    // the quarter hours, summed here per local day
    const quarters = await get<Array<Record<string, unknown>>>(`/data/water?${window}`)
    const rain = await get<Array<Record<string, unknown>>>(`/data/weather?${window}`)
    const meter = await get<Array<{ time_15m: string; sum_value: number }>>(`/data/meters?ids=920&${window}`)
    const sums = (rows: Array<Record<string, unknown>>, column: string) => {
      const out = new Map<string, number>()
      for (const r of rows) {
        if (r[column] === null) continue
        out.set(day(r.time_15m as string), (out.get(day(r.time_15m as string)) ?? 0) + (r[column] as number))
      }
      return out
    }
    const daily = '&aggregation=1%20d&totals=true'
    const checks: Array<[string, string, Array<Record<string, unknown>>, string]> = [
      ['/data/water', 'tot_sede_centrale', quarters, 'tot_sede_centrale_total'],
      ['/data/water', 'tot_font_corr_nord', quarters, 'tot_font_corr_nord_total'],
      ['/data/weather', 'total_rainfall', rain, 'total_rainfall_total'],
    ]
    let inexactRecipes = 0
    for (const [path, column, rows, total] of checks) {
      const expected = sums(rows, column)
      const buckets = await get<Array<Record<string, unknown>>>(`${path}?${window}${daily}&coverage=true`)
      // 00:00 UTC to 23:45 UTC in Rome (+02:00) touches 15 local days
      expect(buckets.length).toBe(15)
      for (const b of buckets) {
        const want = expected.get(day(b.time_15m as string)) ?? 0
        expect(b[total] as number, `${column} ${b.time_15m}`).toBeCloseTo(want, 6)
        // the recipe the total replaces: mean x coverage x quarter hours, off wherever a reading is missing in a row
        if (Math.abs((b[column] as number) * (b.coverage as number) * 96 - want) > 1e-6) inexactRecipes++
      }
    }
    expect(inexactRecipes, 'days where mean x coverage is not the total: the reason totals exist').toBeGreaterThan(0)
    const meterDaily = await get<Array<{ time_15m: string; total_value: number }>>(
      `/data/meters?ids=920&${window}${daily}`,
    )
    const meterSums = sums(meter as unknown as Array<Record<string, unknown>>, 'sum_value')
    for (const b of meterDaily) expect(b.total_value, b.time_15m).toBeCloseTo(meterSums.get(day(b.time_15m)) ?? 0, 6)
    // meter 920 and the column that mirrors it: one volume a day
    const columnDaily = await get<Array<Record<string, unknown>>>(`/data/water?${window}${daily}`)
    const columnTotals = new Map(columnDaily.map((r) => [r.time_15m as string, r.tot_sede_centrale_total as number]))
    for (const b of meterDaily) expect(b.total_value, b.time_15m).toBeCloseTo(columnTotals.get(b.time_15m) as number, 6)
  })
})
