/**
 * The dashboard in a real Chromium: the language from Accept-Language, the four charts drawn by
 * Chart.js, every legend swatch painted, x ticks at local midnights only, how far the data reaches,
 * and the warning once that is more than a day ago. Screenshots land in artifacts/screenshots/.
 */
import { browserAvailable, launchChromium, screenshot } from '@campus/shared/testing'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { takeMessages } from '../../src/repositories/sample-writes.ts'
import { inTransaction } from '../../src/repositories/transaction.ts'
import { END, views } from '../fixtures/views.ts'
import { type Harness, startHarness } from '../harness.ts'

interface Drawn {
  name: string
  legend: Array<{ text: string; painted: number }>
  ticks: string[]
}

/** The little of the DOM and of Chart.js the page is read through (the test compiles without the DOM library). */
interface CanvasLike {
  dataset: { chart?: string }
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } }
}
interface PageGlobals {
  document: { querySelectorAll(selector: string): Iterable<CanvasLike> }
  Chart?: {
    getChart(canvas: CanvasLike):
      | {
          legend: {
            legendItems: Array<{ text: string }>
            legendHitBoxes: Array<{ left: number; top: number; height: number }>
          }
          scales: { x: { ticks: Array<{ label: string | string[] }> } }
          currentDevicePixelRatio: number
        }
      | undefined
  }
}

/** What the page drew, read from Chart.js and from the canvas pixels of each legend swatch. */
function readCharts(): Drawn[] {
  const page = globalThis as unknown as PageGlobals
  return [...page.document.querySelectorAll('canvas[data-chart]')].map((canvas) => {
    const chart = page.Chart?.getChart(canvas)
    if (!chart) return { name: canvas.dataset.chart ?? '', legend: [], ticks: [] }
    const context = canvas.getContext('2d')
    const ratio = chart.currentDevicePixelRatio
    const legend = chart.legend.legendItems.map((item, i) => {
      const box = chart.legend.legendHitBoxes[i] as { left: number; top: number; height: number }
      // the swatch is the first 14 px of the item's box; count the pixels that are not the white background
      const pixels = context.getImageData(box.left * ratio, box.top * ratio, 14 * ratio, box.height * ratio).data
      let painted = 0
      for (let p = 0; p < pixels.length; p += 4) {
        const [r = 255, g = 255, b = 255, a = 0] = [pixels[p], pixels[p + 1], pixels[p + 2], pixels[p + 3]]
        if (a > 0 && (r < 230 || g < 230 || b < 230)) painted++
      }
      return { text: item.text, painted }
    })
    const ticks = chart.scales.x.ticks.map((t) => String(t.label)).filter((label) => label !== '')
    return { name: canvas.dataset.chart ?? '', legend, ticks }
  })
}

/** The last x label of the PV chart, and whether the page is still the one first loaded. */
function pvChartEnd(): { label: string; sameDocument: boolean } {
  const page = globalThis as unknown as PageGlobals & { firstLoad?: boolean }
  const canvas = [...page.document.querySelectorAll('canvas[data-chart="fotovoltaico"]')][0] as CanvasLike
  const chart = page.Chart?.getChart(canvas) as unknown as { data: { labels: unknown[] } }
  return { label: JSON.stringify(chart.data.labels.at(-1)), sameDocument: page.firstLoad === true }
}

/** Whether Chart.js has drawn every canvas of the page. */
function allDrawn(): boolean {
  const page = globalThis as unknown as PageGlobals
  const chart = page.Chart
  return (
    chart !== undefined &&
    [...page.document.querySelectorAll('canvas[data-chart]')].every((c) => chart.getChart(c) !== undefined)
  )
}

describe.skipIf(!browserAvailable())('the dashboard in Chromium', () => {
  let h: Harness
  let browser: Browser
  let clock = 0

  /** The service on a real port, its clock set to `now`. */
  function serve(now: number): string {
    clock = now
    return h.base
  }

  beforeAll(async () => {
    h = await startHarness({ data: views, now: () => clock, listen: true })
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await h?.close()
  })

  async function open(base: string, acceptLanguage: string) {
    const page = await browser.newPage({
      viewport: { width: 1400, height: 1000 },
      extraHTTPHeaders: { 'accept-language': acceptLanguage },
    })
    await page.goto(`${base}/dashboard`)
    await page.waitForFunction(allDrawn)
    return page
  }

  it('speaks the language Accept-Language asks for and draws every chart, legend swatches and midnight ticks', async () => {
    // the morning after the data ends: fresh
    const base = serve(END + 6 * 3_600_000)
    const page = await open(base, 'en-GB,en;q=0.9,it;q=0.5')
    expect(await page.getAttribute('html', 'lang')).toBe('en')
    expect(await page.title()).toBe('Campus energy dashboard')
    expect(await page.locator('.notice.stale').count()).toBe(0)
    expect(await page.locator('p.until').allTextContents()).toEqual(Array(4).fill('Data up to 28/10/2025, 00:00'))
    const drawn = await page.evaluate(readCharts)
    expect(drawn.map((c) => c.name)).toEqual(['fotovoltaico', 'bilancio', 'acqua', 'fontanelle'])
    for (const chart of drawn) {
      expect(chart.legend.length, chart.name).toBeGreaterThan(1)
      for (const item of chart.legend) expect(item.painted, `${chart.name}: ${item.text}`).toBeGreaterThan(10)
    }
    // the 7-day charts (21 October 01:00 to 28 October 00:00 local) tick at the local midnights only
    for (const chart of drawn.filter((c) => c.name !== 'acqua')) {
      expect(chart.ticks, chart.name).toEqual(['22/10', '23/10', '24/10', '25/10', '26/10', '27/10'])
    }
    await screenshot(page, 'energy-dashboard-en')
    await page.close()
  })

  it('draws a new quarter hour without a reload: conditional polling of each chart', async () => {
    const base = serve(END + 10 * 60_000)
    const page = await open(base, 'en')
    await page.evaluate(() => {
      ;(globalThis as { firstLoad?: boolean }).firstLoad = true
    })
    const before = await page.evaluate(pvChartEnd)
    // a datalogger's reading of PV inverter 861 in the next quarter hour, through the one write path
    const pack = JSON.stringify([{ n: 'urn:campus:meter:861', t: END / 1000 + 60, v: 12.5, u: 'kW' }])
    await inTransaction(h.database.pool, (client) =>
      takeMessages(client, [{ source: 'test', payload: Buffer.from(pack), receivedMs: END + 120_000 }]),
    )
    const written = Date.now()
    await page.waitForFunction((label) => {
      const page = globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<unknown> } }
      const chart = (
        globalThis as unknown as { Chart: { getChart(c: unknown): { data: { labels: unknown[] } } } }
      ).Chart.getChart([...page.document.querySelectorAll('canvas[data-chart="fotovoltaico"]')][0])
      return JSON.stringify(chart.data.labels.at(-1)) !== label
    }, before.label)
    const after = await page.evaluate(pvChartEnd)
    expect(after.sameDocument).toBe(true)
    expect(after.label).not.toBe(before.label)
    process.stdout.write(`dashboard: the new quarter hour drawn ${Date.now() - written} ms after it was written\n`)
    await page.close()
  })

  it('says how old the data is and warns when it is more than a day old, in Italian by default', async () => {
    const base = serve(Date.parse('2025-11-20T10:00:00Z'))
    const page = await open(base, 'fr-FR,fr;q=0.9')
    expect(await page.getAttribute('html', 'lang')).toBe('it')
    const warning = await page.locator('.notice.stale').textContent()
    expect(warning).toContain('hanno più di un giorno (fino al 28/10/2025, 00:00)')
    expect(await page.locator('p.until.stale').count()).toBe(4)
    await screenshot(page, 'energy-dashboard-stale-it')
    await page.close()
  })
})
