/**
 * The configurations go through Chart.js itself (the same package the dashboard serves), drawn
 * on a recording 2D context: the library accepts them, stacks what should be stacked, and draws.
 */
import { Chart } from 'chart.js/auto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { views } from './fixtures/views.ts'
import { type Harness, startHarness } from './harness.ts'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ data: views })
})
afterAll(async () => h?.close())

/** A canvas whose 2D context records the drawing calls and measures every text 10 px wide. */
function recordingCanvas() {
  const calls: string[] = []
  const state: Record<string | symbol, unknown> = {}
  const canvas = {
    width: 1000,
    height: 500,
    style: {},
    getContext: () => context,
    addEventListener() {},
    removeEventListener() {},
  }
  const context: object = new Proxy(state, {
    get(target, prop) {
      if (prop in target) return target[prop]
      if (prop === 'canvas') return canvas
      if (prop === 'measureText') return () => ({ width: 10, actualBoundingBoxAscent: 6, actualBoundingBoxDescent: 2 })
      if (prop === 'getLineDash') return () => []
      return () => {
        calls.push(String(prop))
      }
    },
    set(target, prop, value) {
      target[prop] = value
      return true
    },
  })
  return { canvas, calls }
}

interface Config {
  type: 'line' | 'bar'
  data: { labels: string[]; datasets: Array<{ data: Array<number | null>; stack?: string }> }
  options: Record<string, unknown>
}

async function draw(name: string, lang: string) {
  const config = (await h.app.inject(`/chart/${name}?lang=${lang}`)).json() as Config
  const { canvas, calls } = recordingCanvas()
  const chart = new Chart(canvas, {
    ...config,
    options: { ...config.options, responsive: false, animation: false },
  })
  return { config, chart, calls }
}

/** Largest total of the datasets sharing a stack, over all points. */
function largestStack(config: Config): number {
  let largest = 0
  const stacks = new Set(config.data.datasets.map((d) => d.stack))
  for (const stack of stacks) {
    const members = config.data.datasets.filter((d) => d.stack === stack)
    for (let k = 0; k < config.data.labels.length; k++) {
      largest = Math.max(
        largest,
        members.reduce((sum, d) => sum + (d.data[k] ?? 0), 0),
      )
    }
  }
  return largest
}

describe('Chart.js draws every configuration', () => {
  for (const name of ['fotovoltaico', 'bilancio', 'fontanelle']) {
    it(`${name}: stacked areas on a value axis that holds the stacked totals`, async () => {
      for (const lang of ['it', 'en']) {
        const { config, chart, calls } = await draw(name, lang)
        expect(chart.data.datasets).toHaveLength(config.data.datasets.length)
        expect(Object.keys(chart.scales).sort()).toEqual(['x', 'y'])
        expect((chart.scales.y!.options as { stacked?: boolean }).stacked).toBe(true)
        // stacking happened: the axis reaches the largest stacked total, not only the largest series
        expect(chart.scales.y!.max).toBeGreaterThanOrEqual(largestStack(config))
        expect(calls).toContain('lineTo')
        expect(calls).toContain('fill')
        expect(calls).toContain('fillText')
        chart.destroy()
      }
    })
  }

  it('acqua: side-by-side columns, one per day', async () => {
    const { config, chart, calls } = await draw('acqua', 'it')
    expect(chart.scales.x!.ticks.length).toBeGreaterThan(0)
    expect((chart.scales.y!.options as { stacked?: boolean }).stacked).toBeFalsy()
    const largest = Math.max(...config.data.datasets.flatMap((d) => d.data.filter((v): v is number => v !== null)))
    expect(chart.scales.y!.max).toBeGreaterThanOrEqual(largest)
    expect(chart.getDatasetMeta(0).data).toHaveLength(30)
    expect(chart.getDatasetMeta(1).data).toHaveLength(30)
    expect(calls).toContain('fill')
    chart.destroy()
  })
})
