import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  consumption,
  dailySums,
  FOUNTAINS,
  fountain,
  LAST_QUARTER,
  mainWater,
  PLANT_FACTORS,
  type Plant,
  plant,
  production,
  type Slot,
  slots,
  totPv,
  views,
} from './fixtures/views.ts'
import { type Harness, startHarness } from './harness.ts'
import { local, QUARTER } from './support.ts'

interface ChartBody {
  type: string
  data: { labels: string[]; datasets: Array<{ label: string; data: Array<number | null>; stack?: string }> }
  options: {
    plugins: { title: { text: string }; subtitle: { text: string } }
    scales: { x: { title: { text: string } }; y: { stacked?: boolean; title: { text: string } } }
  }
}

let h: Harness

beforeAll(async () => {
  h = await startHarness({ data: views })
})
afterAll(async () => h?.close())

const get = (url: string, headers: Record<string, string> = {}) => h.app.inject({ method: 'GET', url, headers })
const isLocalMidnight = (t: number) => local(t).hour === 0 && local(t).minute === 0

/** The 672 quarter hours ending with the newest one stored, each with its fixture slot when present. */
const window7 = Array.from({ length: 672 }, (_, k) => LAST_QUARTER - (671 - k) * QUARTER)
const bySlotTime = new Map(slots.map((s) => [s.t, s]))
const expectSeries = (actual: Array<number | null>, value: (s: Slot) => number) => {
  expect(actual).toHaveLength(672)
  window7.forEach((t, k) => {
    const slot = bySlotTime.get(t)
    if (!slot) expect(actual[k], `quarter ${new Date(t).toISOString()}`).toBeNull()
    else expect(actual[k], `quarter ${new Date(t).toISOString()}`).toBeCloseTo(value(slot), 2)
  })
}

describe('GET /chart/fotovoltaico', () => {
  it('is a stacked area of each plant in kW (the pv columns are mean kW, drawn as they are) over the last 7 days', async () => {
    const res = await get('/chart/fotovoltaico')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    const body = res.json() as ChartBody
    expect(body.type).toBe('line')
    expect(body.options.scales.y.stacked).toBe(true)
    expect(body.options.plugins.title.text).toBe('Produzione fotovoltaica per impianto')
    expect(body.options.scales.y.title.text).toBe('Potenza (kW)')
    // 7 x 24 hours ending where the newest quarter hour ends (the window starts at 01:00 across the DST change)
    expect(body.options.plugins.subtitle.text).toBe('Dal 21/10/2025, 01:00 al 28/10/2025, 00:00 (Europe/Rome)')
    expect(body.data.labels).toHaveLength(672)
    // last label is the newest quarter: Monday 27 October 23:45 local (+01:00)
    expect(body.data.labels.at(-1)).toMatch(/27\/10.*23:45/)
    expect(body.data.datasets.map((d) => d.label)).toEqual([
      'Aule P',
      'Aule R',
      'Castelfidardo',
      'Cittadella',
      'Energy Center',
      'I3P',
      'Totale campus (misurato)',
    ])
    const plants = Object.keys(PLANT_FACTORS) as Plant[]
    plants.forEach((p, k) => {
      expectSeries(body.data.datasets[k]!.data, (s) => plant(p, s))
    })
    // the metered campus total, a line on a stack of its own: where a plant is missing the pile stops below it
    const total = body.data.datasets[6] as unknown as { stack: string; data: Array<number | null> }
    expect(total.stack).not.toBe((body.data.datasets[0] as unknown as { stack: string }).stack)
    expectSeries(total.data, totPv)
    // the repeated hour of 26 October carries its offset, so no two labels are alike
    expect(new Set(body.data.labels).size).toBe(672)
    const repeated = body.data.labels.filter((l) => /26\/10.*02:15/.test(l))
    expect(repeated).toHaveLength(2)
    expect(repeated[0]).toMatch(/\+02:00$/)
    expect(repeated[1]).toMatch(/\+01:00$/)
    // the two-hour gap of 22 October is null, not zero
    const gapIndex = window7.indexOf(Date.parse('2025-10-22T08:00:00Z'))
    expect(gapIndex).toBeGreaterThan(0)
    expect(body.data.datasets[0]!.data.slice(gapIndex, gapIndex + 8)).toEqual(Array(8).fill(null))
    expect(body.data.datasets[0]!.data[gapIndex + 8]).not.toBeNull()
  })

  it('ticks the x axis at local midnights only, with a grid line there; tooltips keep the full labels', async () => {
    const body = (await get('/chart/fotovoltaico')).json() as ChartBody & {
      options: { scales: { x: { labels: string[]; ticks: { autoSkip: boolean }; grid: { lineWidth: number[] } } } }
    }
    const x = body.options.scales.x
    expect(x.labels).toHaveLength(672)
    expect(x.ticks.autoSkip).toBe(false)
    const midnights = window7.flatMap((t, k) => (isLocalMidnight(t) ? [k] : []))
    expect(midnights.map((k) => x.labels[k])).toEqual(['22/10', '23/10', '24/10', '25/10', '26/10', '27/10'])
    expect(x.labels.filter((l) => l !== '')).toHaveLength(6)
    expect(x.grid.lineWidth.flatMap((w, k) => (w ? [k] : []))).toEqual(midnights)
    expect(body.data.labels[midnights[0]!]).toMatch(/^mer 22\/10, 00:00$/)
  })

  it('speaks English with lang=en', async () => {
    const body = (await get('/chart/fotovoltaico?lang=en')).json() as ChartBody
    expect(body.options.plugins.title.text).toBe('Photovoltaic production by plant')
    expect(body.options.scales.x.title.text).toBe('Local time')
    expect(body.data.labels.at(-1)).toMatch(/Mon.*27\/10.*23:45/)
  })
})

describe('GET /chart/bilancio', () => {
  it('stacks PV production and grid withdrawal, with consumption as a line, in kW', async () => {
    const res = await get('/chart/bilancio?lang=en')
    expect(res.statusCode).toBe(200)
    const body = res.json() as ChartBody
    const [pv, grid, load] = body.data.datasets
    expect(pv!.label).toBe('Photovoltaic production')
    expect(grid!.label).toBe('Grid withdrawal')
    expect(load!.label).toBe('Building consumption')
    expect(pv!.stack).toBe(grid!.stack)
    expect(load!.stack).not.toBe(pv!.stack)
    expectSeries(pv!.data, (s) => production(s))
    expectSeries(grid!.data, (s) => Math.max(consumption(s) - production(s), 0))
    expectSeries(load!.data, (s) => consumption(s))
  })
})

describe('GET /chart/acqua', () => {
  it('has columns of daily volumes over the last 30 complete local days, DST day included', async () => {
    const res = await get('/chart/acqua?lang=en')
    expect(res.statusCode).toBe(200)
    const body = res.json() as ChartBody
    expect(body.type).toBe('bar')
    expect(body.data.labels).toHaveLength(30)
    // the subtitle says what a "(88/96)" after a day's name means
    expect(body.options.plugins.subtitle.text).toBe(
      'From 28/09/2025 to 27/10/2025 (Europe/Rome) · (n/N) after a day: n of its N quarter hours measured',
    )
    expect(body.data.labels.at(-1)).toMatch(/27\/10/)
    expect(body.data.labels[0]).toMatch(/28\/09/)
    const main = dailySums(mainWater)
    const fountains = dailySums((s) => FOUNTAINS.reduce((sum, _f, k) => sum + fountain(k, s), 0))
    // 22 days before the data start: no data, null columns
    expect(body.data.datasets[0]!.data.slice(0, 22)).toEqual(Array(22).fill(null))
    const days = ['2025-10-20', '2025-10-21', '2025-10-22', '2025-10-23', '2025-10-24', '2025-10-25', '2025-10-26']
    days.push('2025-10-27')
    days.forEach((day, k) => {
      expect(body.data.datasets[0]!.data[22 + k], day).toBeCloseTo(main.get(day)!, 3)
      expect(body.data.datasets[1]!.data[22 + k], day).toBeCloseTo(fountains.get(day)!, 3)
    })
    // the fall-back day sums 100 quarter hours, the gap day 88
    const quarters = (day: string) => slots.filter((s) => local(s.t).date === day).length
    expect(quarters('2025-10-26')).toBe(100)
    expect(quarters('2025-10-22')).toBe(88)
    // a day with missing quarter hours says how many of its own were measured; a whole day says nothing
    expect(body.data.labels[22 + days.indexOf('2025-10-22')]).toMatch(/22\/10.* \(88\/96\)$/)
    expect(body.data.labels[22 + days.indexOf('2025-10-26')]).toMatch(/26\/10$/)
    expect(body.data.labels[0]).toMatch(/ \(0\/96\)$/)
    const partial = body.data.labels.filter((l) => / \(\d+\/\d+\)$/.test(l))
    expect(partial).toHaveLength(22 + days.filter((d) => quarters(d) < 96 && d !== '2025-10-26').length)
  })
})

describe('GET /chart/fontanelle', () => {
  it('stacks the flow of each drinking fountain in L/h (the m³ of a quarter hour x 1000 / 0.25 h)', async () => {
    const body = (await get('/chart/fontanelle')).json() as ChartBody
    expect(body.data.datasets.map((d) => d.label)).toEqual([
      'Aula Magna',
      'Aule P',
      'Corridoio DENERG',
      'Corridoio nord',
      'Corridoio sud',
    ])
    FOUNTAINS.forEach((_f, k) => {
      expectSeries(body.data.datasets[k]!.data, (s) => fountain(k, s) * 4000)
    })
    expect(body.options.scales.y.title.text).toBe('Portata (L/h)')
  })
})

describe('chart validation and caching', () => {
  it('answers 422 in FastAPI shape for an unknown language', async () => {
    for (const chart of ['fotovoltaico', 'bilancio', 'acqua', 'fontanelle']) {
      const res = await get(`/chart/${chart}?lang=de`)
      expect(res.statusCode).toBe(422)
      expect(res.json()).toEqual({
        detail: [{ loc: ['query', 'lang'], msg: expect.stringContaining("'it'"), type: 'enum' }],
      })
    }
  })

  it('sends a strong ETag and public caching, and 304 when the client holds the current body', async () => {
    const first = await get('/chart/acqua')
    const etag = first.headers.etag as string
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    expect(first.headers['cache-control']).toBe('public, max-age=300')
    const again = await get('/chart/acqua')
    expect(again.headers.etag).toBe(etag)
    const cached = await get('/chart/acqua', { 'if-none-match': etag })
    expect(cached.statusCode).toBe(304)
    expect(cached.body).toBe('')
    expect(cached.headers.etag).toBe(etag)
    expect((await get('/chart/acqua', { 'if-none-match': `"other", W/${etag}` })).statusCode).toBe(304)
    expect((await get('/chart/acqua', { 'if-none-match': '"stale"' })).statusCode).toBe(200)
    // another language is another body, another tag
    expect((await get('/chart/acqua?lang=en')).headers.etag).not.toBe(etag)
  })

  it('needs no API key and is described in the OpenAPI document under Chart', async () => {
    const doc = (await get('/openapi.json')).json() as {
      paths: Record<string, { get: { tags: string[]; parameters: Array<{ name: string }>; responses: object } }>
    }
    for (const chart of ['fotovoltaico', 'bilancio', 'acqua', 'fontanelle']) {
      const op = doc.paths[`/chart/${chart}`]!.get
      expect(op.tags).toEqual(['Chart'])
      expect(op.parameters.map((p) => p.name)).toEqual(['lang'])
      expect(Object.keys(op.responses).sort()).toEqual(['200', '304', '404', '422', '429'])
    }
  })
})
