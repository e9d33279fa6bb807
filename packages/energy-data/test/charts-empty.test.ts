import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, startHarness } from './harness.ts'

let h: Harness

beforeAll(async () => {
  h = await startHarness()
})
afterAll(async () => h?.close())

describe('views of an empty database', () => {
  it('draws every chart over the window ending now, with gaps only', async () => {
    for (const name of ['fotovoltaico', 'bilancio', 'fontanelle', 'acqua']) {
      const res = await h.app.inject(`/chart/${name}`)
      expect(res.statusCode, name).toBe(200)
      const body = res.json() as { data: { labels: string[]; datasets: Array<{ data: unknown[] }> } }
      expect(body.data.labels, name).toHaveLength(name === 'acqua' ? 30 : 672)
      for (const dataset of body.data.datasets)
        expect(
          dataset.data.every((v) => v === null),
          name,
        ).toBe(true)
    }
  })

  it('writes reports that say there is no data', async () => {
    const water = await h.app.inject('/report/water?lang=en')
    expect(water.statusCode).toBe(200)
    expect(water.body).toContain('Quarter hours with data: 0 of 672')
    expect(water.body).toContain('No data in this range.')
    const pv = await h.app.inject('/report/pv?format=text&lang=en')
    expect(pv.statusCode).toBe(200)
    expect(pv.body).toContain('No quarter hour with both production and consumption in this range.')
    const schedules = await h.app.inject('/report/palinsesti?lang=en')
    expect(schedules.statusCode).toBe(200)
    const year = new Intl.DateTimeFormat('en', { timeZone: 'Europe/Rome', year: 'numeric' }).format(new Date())
    expect(schedules.body).toContain(`# Operating schedules ${year}`)
    expect(schedules.body).toContain('Chiller plant 1: no data in')
  })
})
