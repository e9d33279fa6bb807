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
    data: seeded({ from: '2025-06-01', to: '2025-06-02', seed: '9' }),
    now: () => Date.parse('2025-06-03T12:00:00Z'),
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
      const readings = await get<Array<{ time_15m: string; avg_value: number | null }>>(
        `/data/meters?ids=${schema['x-meter']}&${window}`,
      )
      const byTime = new Map(rows.map((r) => [r.time_15m as string, r[column]]))
      const compared = readings.filter((r) => byTime.has(r.time_15m) && byTime.get(r.time_15m) !== null)
      expect(compared.length, `${group}.${column}`).toBeGreaterThan(80)
      for (const r of compared) expect(byTime.get(r.time_15m), `${group}.${column} ${r.time_15m}`).toBe(r.avg_value)
    }
  })
})
