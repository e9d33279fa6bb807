/** ENERGY_TIMEZONE is the zone of every view: data offsets, chart labels and days, report days, the dashboard. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import { defaultSettings } from '../src/config.ts'
import { END, views } from './fixtures/views.ts'
import { type Harness, startHarness } from './harness.ts'

let h: Harness
let key: string

beforeAll(async () => {
  h = await startHarness({ data: views, settings: { zone: 'UTC' }, now: () => END })
  key = await h.key(['*'], 'zone')
})
afterAll(async () => h?.close())

const get = (url: string, headers: Record<string, string> = {}) => h.app.inject({ url, headers })

describe('ENERGY_TIMEZONE=UTC', () => {
  it('writes data offsets and day buckets in UTC', async () => {
    const rows = (
      await get('/data/water?aggregation=1%20d&start_datetime=2025-10-26&end_datetime=2025-10-26', { 'x-api-key': key })
    ).json() as Array<{ time_15m: string }>
    expect(rows.map((r) => r.time_15m)).toEqual(['2025-10-26T00:00:00+00:00'])
  })

  it('labels the charts and cuts their days in UTC', async () => {
    const acqua = (await get('/chart/acqua?lang=en')).json() as {
      data: { labels: string[] }
      options: { plugins: { subtitle: { text: string } } }
    }
    // the data ends at 23:00 UTC on the 27th: the 27th is not complete in UTC, the 26th is the last day
    expect(acqua.options.plugins.subtitle.text).toMatch(/^From 27\/09\/2025 to 26\/10\/2025 \(UTC\)/)
    const pv = (await get('/chart/fotovoltaico?lang=en')).json() as {
      options: { scales: { x: { labels: string[] } } }
      data: { labels: string[] }
    }
    expect(pv.data.labels.at(-1)).toMatch(/27\/10, 22:45$/)
    expect(pv.options.scales.x.labels.filter(Boolean)).toEqual([
      '21/10',
      '22/10',
      '23/10',
      '24/10',
      '25/10',
      '26/10',
      '27/10',
    ])
  })

  it('reports in UTC days unless a report asks for another zone', async () => {
    const water = await get('/report/water?lang=en', { accept: 'text/markdown' })
    expect(water.body).toContain(
      'From 2025-10-20T00:00:00+00:00 to 2025-10-26T23:59:59+00:00 (inclusive), times in UTC.',
    )
    const rome = await get('/report/water?lang=en&timezone=Europe/Rome', { accept: 'text/markdown' })
    expect(rome.body).toContain('times in Europe/Rome.')
  })

  it('shows the dashboard in UTC', async () => {
    const html = (await get('/dashboard?lang=en')).body
    expect(html).toContain('quarter hour by quarter hour (local time UTC)')
    expect(html).toContain('Data up to 27/10/2025, 23:00')
  })

  it('refuses to start with a zone that is not an IANA name', async () => {
    await expect(buildApp({ database: h.database, settings: defaultSettings({ zone: 'Rome' }) })).rejects.toThrow(
      /ENERGY_TIMEZONE "Rome" is not an IANA time zone name/,
    )
  })
})
