import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  cf1,
  cf2,
  cf3,
  consumption,
  dailySums,
  datacenter,
  EMPTY_METER_ID,
  END,
  FIRST_QUARTER,
  FOUNTAINS,
  fountain,
  METER_ID,
  mainWater,
  meterRow,
  PLANT_FACTORS,
  type Plant,
  plant,
  production,
  QUARTERS,
  radiation,
  type Slot,
  slots,
  totPv,
  views,
} from './fixtures/views.ts'
import { type Harness, startHarness } from './harness.ts'
import { local, tableRows } from './support.ts'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ data: views })
})
afterAll(async () => h?.close())

/** The report as Markdown, in English unless the URL asks for a language (Italian is the default). */
const get = (url: string, headers: Record<string, string> = {}) =>
  h.app.inject({
    method: 'GET',
    url: url.includes('lang=') ? url : `${url}${url.includes('?') ? '&' : '?'}lang=en`,
    headers: { accept: 'text/markdown', ...headers },
  })

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)
const parseNumber = (text: string) => Number(text.replace(/,/g, ''))

/** The number after `label:` on a list line of the report. */
function listValue(body: string, label: string): number {
  const line = body.split('\n').find((l) => l.startsWith(`- ${label}:`))
  if (!line) throw new Error(`no line "${label}" in\n${body}`)
  const match = /:\s*(-?[\d,]+(?:\.\d+)?)/.exec(line)
  return parseNumber(match![1]!)
}

const inRange = (from: number, to: number) => slots.filter((s) => s.t >= from && s.t <= to)
const ALL = inRange(FIRST_QUARTER, END - 1)

describe('GET /report/meter', () => {
  const url = `/report/meter?uuid=${METER_ID}&start_datetime=2025-10-20&end_datetime=2025-10-27`

  it('reports coverage, quality tags, statistics and days as Markdown', async () => {
    const res = await get(url)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8')
    const body = res.body
    expect(body).toMatch(/^# Meter report: 860\) Quadro generale Aule P\n/)
    // a date alone as end covers the whole local day: 8 local days, 772 quarter hours
    expect(body).toContain('From 2025-10-20T00:00:00+02:00 to 2025-10-27T23:59:59+01:00 (inclusive)')
    expect(body).toContain(`Quarter hours with data: ${ALL.length} of ${QUARTERS}`)
    expect(QUARTERS).toBe(772)
    expect(listValue(body, 'Missing quarter hours')).toBe(8)
    expect(listValue(body, 'Longest interval between two readings')).toBe(135)

    const stored = ALL.map(meterRow)
    expect(listValue(body, 'Raw samples')).toBe(sum(stored.map((r) => r.count)))
    const estimated = stored.filter((r) => r.tag === 'estimated').length
    expect(estimated).toBeGreaterThan(0)
    expect(body).toContain(`Data-quality tags: estimated ${estimated}, ok ${stored.length - estimated}`)
    // the statistics count the quarter hours tagged ok, as /data/meters does by default
    const rows = stored.filter((r) => r.tag === 'ok')
    expect(listValue(body, 'Mean of the quarter hours')).toBeCloseTo(sum(rows.map((r) => r.sum)) / rows.length, 3)
    // an energy meter's quarter-hour values are energies of the quarter hour
    const max = rows.reduce((a, b) => (b.sum > a.sum ? b : a))
    expect(body).toContain(`Maximum: ${max.sum.toFixed(3)} kWh per quarter hour at ${local(max.time).iso}`)
    const min = rows.reduce((a, b) => (b.sum < a.sum ? b : a))
    expect(body).toContain(`Minimum: ${min.sum.toFixed(3)} kWh per quarter hour at ${local(min.time).iso}`)
    // the largest reading of all is an estimated one: left out of the figures
    const largest = stored.reduce((a, b) => (b.sum > a.sum ? b : a))
    expect(largest.tag).toBe('estimated')
    expect(body).not.toContain(`Maximum: ${largest.sum.toFixed(3)}`)
    // the energy of the window adds up the quarter-hour values, not the raw samples (sum_value)
    expect(listValue(body, 'Energy')).toBeCloseTo(sum(rows.map((r) => r.sum)), 3)
    expect(body).toContain(
      `Energy: ${sum(rows.map((r) => r.sum)).toLocaleString('en-US', { minimumFractionDigits: 3 })} kWh`,
    )

    const days = tableRows(body, 'By day')
    const expectedDays = dailySums((s) => (meterRow(s).tag === 'ok' ? meterRow(s).sum : 0))
    expect(days.map((d) => d[0])).toEqual([...expectedDays.keys()])
    for (const [day, quarters, mean, , , dayEnergy] of days) {
      const inDay = rows.filter((r) => local(r.time).date === day)
      expect(Number(quarters), day).toBe(inDay.length)
      expect(parseNumber(mean!), day).toBeCloseTo(sum(inDay.map((r) => r.sum)) / inDay.length, 3)
      expect(parseNumber(dayEnergy!), day).toBeCloseTo(expectedDays.get(day!)!, 3)
    }
    // the day of 25 hours and the gapped day, each with its estimated quarter hours left out
    const storedOn = (day: string) => stored.filter((r) => local(r.time).date === day)
    expect(storedOn('2025-10-26')).toHaveLength(100)
    expect(storedOn('2025-10-22')).toHaveLength(88)
    for (const day of ['2025-10-26', '2025-10-22'])
      expect(days.find((d) => d[0] === day)![1]).toBe(String(storedOn(day).filter((r) => r.tag === 'ok').length))
  })

  it('reads bounds without an offset as UTC and covers the whole local days holding them', async () => {
    const utc = await get(
      `/report/meter?uuid=${METER_ID}&start_datetime=2025-10-26T00:00:00Z&end_datetime=2025-10-26T01:45Z`,
    )
    expect(utc.body).toContain('From 2025-10-26T00:00:00+02:00 to 2025-10-26T23:59:59+01:00')
    expect(utc.body).toContain('Quarter hours with data: 100 of 100')
    // 23:30 UTC on the 25th is 01:30 on the 26th in Rome: the report covers the 26th
    const naive = await get(`/report/meter?uuid=${METER_ID}&start_datetime=2025-10-25 23:30&end_datetime=2025-10-26`)
    expect(naive.body).toContain('From 2025-10-26T00:00:00+02:00 to 2025-10-26T23:59:59+01:00')
    const inUtc = await get(
      `/report/meter?uuid=${METER_ID}&start_datetime=2025-10-26 00:00&end_datetime=2025-10-26 01:45&timezone=UTC`,
    )
    expect(inUtc.body).toContain('From 2025-10-26T00:00:00+00:00 to 2025-10-26T23:59:59+00:00')
    expect(inUtc.body).toContain('Quarter hours with data: 96 of 96')
  })

  it('defaults to the 30 local days ending with the newest complete day of the meter', async () => {
    const body = (await get(`/report/meter?uuid=${METER_ID}`)).body
    expect(body).toContain('From 2025-09-28T00:00:00+02:00 to 2025-10-27T23:59:59+01:00 (inclusive)')
    expect(body).toContain(`Quarter hours with data: ${ALL.length} of ${30 * 96 + 4}`)
  })

  it('says so when a meter has no data', async () => {
    const res = await get(`/report/meter?uuid=${EMPTY_METER_ID}&start_datetime=2025-10-20&end_datetime=2025-10-21`)
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('Quarter hours with data: 0 of 192')
    expect(res.body).toContain('No data in this range.')
  })

  it('answers 404 for an unknown meter and 422 for a missing or non-integer uuid', async () => {
    const unknown = await get('/report/meter?uuid=999')
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toEqual({ detail: 'Meter 999 not found' })
    for (const [query, type] of [
      ['uuid=abc', 'integer_type'],
      ['uuid=1.5', 'integer_type'],
      ['', 'missing'],
      ['uuid=0', 'greater_than_equal'],
      ['uuid=99999999999', 'less_than_equal'],
      ['uuid=Infinity', 'finite_number'],
    ] as const) {
      const res = await get(`/report/meter?${query}`)
      expect(res.statusCode, query).toBe(422)
      expect(res.json(), query).toEqual({ detail: [{ loc: ['query', 'uuid'], msg: expect.any(String), type }] })
    }
  })
})

describe('report validation', () => {
  const cases: Array<[string, string, string]> = [
    ['/report/water?start_datetime=yesterday', 'start_datetime', 'datetime_parsing'],
    ['/report/water?start_datetime=2025-13-01', 'start_datetime', 'datetime_parsing'],
    ['/report/pv?end_datetime=2025-02-30T10:00', 'end_datetime', 'datetime_parsing'],
    ['/report/pv?start_datetime=2025-10-26T10:00&end_datetime=2025-10-26T09:00', 'end_datetime', 'value_error'],
    [`/report/meter?uuid=${METER_ID}&start_datetime=2025-10-27&end_datetime=2025-10-20`, 'end_datetime', 'value_error'],
    ['/report/water?timezone=Mars/Olympus', 'timezone', 'value_error'],
    // a start alone, after the newest data (the default end): the start is at fault, not the end never sent
    ['/report/water?start_datetime=2099-01-01', 'start_datetime', 'value_error'],
    ['/report/water?start_datetime=2020-01-01&end_datetime=2025-01-01', 'end_datetime', 'value_error'],
    ['/report/pv?start_datetime=0001-01-01&end_datetime=9998-12-31', 'end_datetime', 'value_error'],
    ['/report/water?format=pdf', 'format', 'enum'],
    ['/report/palinsesti?year=abc', 'year', 'integer_type'],
    ['/report/palinsesti?year=1800', 'year', 'greater_than_equal'],
    ['/report/palinsesti?year=Infinity', 'year', 'finite_number'],
    ['/report/pv?lang=fr', 'lang', 'enum'],
  ]
  it.each(cases)('%s answers 422 on %s', async (url, field, type) => {
    const res = await get(url)
    expect(res.statusCode).toBe(422)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.json()).toEqual({ detail: [{ loc: ['query', field], msg: expect.any(String), type }] })
  })

  it('explains how to narrow a range that is too long', async () => {
    const res = await get('/report/water?start_datetime=2020-01-01&end_datetime=2025-01-01')
    expect(res.json().detail[0].msg).toMatch(/narrow start_datetime\/end_datetime/)
  })
})

describe('GET /report/water', () => {
  const url = '/report/water?start_datetime=2025-10-20&end_datetime=2025-10-27'

  it('totals, peaks and the night baseline per meter, and volumes per local day', async () => {
    const body = (await get(url)).body
    const meters: Array<[string, (s: Slot) => number]> = [
      ['Main site', mainWater],
      ...FOUNTAINS.map((_f, k): [string, (s: Slot) => number] => [
        [
          'Fountain Main hall',
          'Fountain Aule P',
          'Fountain DENERG corridor',
          'Fountain North corridor',
          'Fountain South corridor',
        ][k]!,
        (s) => fountain(k, s),
      ]),
    ]
    const rows = tableRows(body, 'By meter')
    expect(rows.map((r) => r[0])).toEqual(meters.map((m) => m[0]))
    meters.forEach(([name, value], k) => {
      const values = ALL.map(value)
      const row = rows[k]!
      expect(parseNumber(row[1]!), name).toBeCloseTo(sum(values), 3)
      expect(parseNumber(row[2]!), name).toBeCloseTo((sum(values) / values.length) * 4, 3)
      expect(parseNumber(row[3]!), name).toBeCloseTo(Math.max(...values) * 4, 3)
      const night = ALL.filter((s) => local(s.t).hour === 2 || local(s.t).hour === 3).map(value)
      expect(parseNumber(row[5]!), name).toBeCloseTo((sum(night) / night.length) * 4, 3)
      expect(Number(row[6]), name).toBe(ALL.length)
    })
    expect(listValue(body, 'Main site total')).toBeCloseTo(sum(ALL.map(mainWater)), 3)
    expect(listValue(body, 'Drinking fountains total')).toBeCloseTo(
      sum(ALL.map((s) => sum(FOUNTAINS.map((_f, k) => fountain(k, s))))),
      3,
    )
    // the first quarter hour holding the main site's peak
    const peak = Math.max(...ALL.map(mainWater))
    const peakAt = ALL.find((s) => mainWater(s) === peak)!.t
    expect(peakAt).toBe(Date.parse('2025-10-19T23:30:00Z'))
    expect(body).toContain('in the quarter hour starting 2025-10-20T01:30:00+02:00')

    const days = tableRows(body, 'By day')
    const main = dailySums(mainWater)
    expect(days).toHaveLength(8)
    for (const row of days) expect(parseNumber(row[2]!), row[0]).toBeCloseTo(main.get(row[0]!)!, 3)
    expect(days.find((r) => r[0] === '2025-10-26')![1]).toBe('100')
  })

  it('cuts days at midnight of the requested zone', async () => {
    const body = (await get(`${url}&timezone=UTC`)).body
    const days = tableRows(body, 'By day')
    const utcDay = (s: Slot) => new Date(s.t).toISOString().slice(0, 10)
    const from = Date.parse('2025-10-20T00:00:00Z')
    const inWindow = slots.filter((s) => s.t >= from && s.t < Date.parse('2025-10-28T00:00:00Z'))
    const byDay = new Map<string, number>()
    for (const s of inWindow) byDay.set(utcDay(s), (byDay.get(utcDay(s)) ?? 0) + 1)
    expect(days.map((r) => [r[0], Number(r[1])])).toEqual([...byDay.entries()])
    expect(byDay.get('2025-10-26')).toBe(96)
  })

  it('is plain text with format=text, a JSON string with format=json, and follows Accept otherwise', async () => {
    const markdown = await get(url)
    const text = await get(`${url}&format=text`)
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(text.body).toMatch(/^Water report\n============\n/)
    expect(text.body).not.toContain('|')
    const json = await get(`${url}&format=json`)
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(json.json()).toBe(markdown.body)
    expect((await get(url, { accept: 'application/json' })).json()).toBe(markdown.body)
    expect((await get(url, { accept: 'text/plain, text/markdown' })).body).toBe(text.body)
    // a browser's Accept names none of the report types: the contract's JSON
    expect((await get(url, { accept: 'text/html,*/*;q=0.8' })).headers['content-type']).toBe(
      'application/json; charset=utf-8',
    )
    expect(markdown.headers.vary).toBe('Accept')
    expect(text.headers.etag).not.toBe(markdown.headers.etag)
  })

  it('answers 304 to a client holding the current report', async () => {
    const first = await get(url)
    expect(first.headers['cache-control']).toBe('public, max-age=300')
    const again = await get(url, { 'if-none-match': first.headers.etag as string })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
  })
})

describe('GET /report/pv', () => {
  const url = '/report/pv?start_datetime=2025-10-20&end_datetime=2025-10-27'

  // pv and aulep columns are mean kW per quarter hour: energy is kW x 0.25 h, power is read as it is
  it('totals the production per plant and balances the Aule P building quarter by quarter', async () => {
    const body = (await get(url)).body
    expect(listValue(body, 'Total production')).toBeCloseTo(sum(ALL.map(totPv)) * 0.25, 2)
    const peak = Math.max(...ALL.map(totPv))
    expect(listValue(body, 'Peak power')).toBeCloseTo(peak, 2)
    expect(listValue(body, 'Global irradiation on the horizontal plane')).toBeCloseTo(
      (sum(ALL.map(radiation)) * 0.25) / 1000,
      2,
    )
    const plants = tableRows(body, 'Production')
    ;(Object.keys(PLANT_FACTORS) as Plant[]).forEach((p, k) => {
      expect(parseNumber(plants[k]![1]!), p).toBeCloseTo(sum(ALL.map((s) => plant(p, s))) * 0.25, 2)
      expect(parseNumber(plants[k]![3]!), p).toBeCloseTo(Math.max(...ALL.map((s) => plant(p, s))), 2)
    })

    const prod = sum(ALL.map(production)) * 0.25
    const cons = sum(ALL.map(consumption)) * 0.25
    const self = sum(ALL.map((s) => Math.min(production(s), consumption(s)))) * 0.25
    const grid = sum(ALL.map((s) => Math.max(consumption(s) - production(s), 0))) * 0.25
    expect(listValue(body, 'PV production')).toBeCloseTo(prod, 2)
    expect(listValue(body, 'Consumption')).toBeCloseTo(cons, 2)
    expect(listValue(body, 'PV used on site')).toBeCloseTo(self, 2)
    expect(listValue(body, 'PV surplus fed to the grid')).toBeCloseTo(prod - self, 2)
    expect(listValue(body, 'Grid withdrawal')).toBeCloseTo(grid, 2)
    expect(listValue(body, 'Self-consumption (PV used on site / PV production)')).toBeCloseTo((self / prod) * 100, 1)
    expect(listValue(body, 'Self-sufficiency (PV used on site / consumption)')).toBeCloseTo((self / cons) * 100, 1)

    const days = tableRows(body, 'By day')
    const daily = dailySums(totPv)
    expect(days.map((r) => r[0])).toEqual([...daily.keys()])
    for (const row of days) expect(parseNumber(row[2]!), row[0]).toBeCloseTo(daily.get(row[0]!)! * 0.25, 2)
  })
})

describe('GET /report/palinsesti', () => {
  const series: Array<[string, (s: Slot) => number]> = [
    ['Chiller plant 1 (cf1_tot)', cf1],
    ['Chiller plant 2 (cf2_tot)', cf2],
    ['Chiller plant 3 (cf3_tot)', cf3],
    ['Data centre (tot_dc)', datacenter],
    ['Aule P building (consumo_aula_1p)', consumption],
  ]

  /** Hours (local) in which the series runs (> 10 % of its peak) in at least half of the quarter hours. */
  function schedule(value: (s: Slot) => number, weekend: boolean): string {
    const peak = Math.max(...slots.map(value))
    const hours: boolean[] = []
    for (let h = 0; h < 24; h++) {
      const inHour = slots.filter((s) => local(s.t).hour === h && local(s.t).weekend === weekend)
      hours.push(inHour.filter((s) => value(s) > peak * 0.1).length / inHour.length >= 0.5)
    }
    if (hours.every(Boolean)) return 'always'
    const ranges: string[] = []
    for (let h = 0; h < 24; h++) {
      if (hours[h] && !hours[h - 1]) {
        let end = h
        while (hours[end]) end++
        ranges.push(`${String(h).padStart(2, '0')}:00-${String(end).padStart(2, '0')}:00`)
      }
    }
    return ranges.join(', ')
  }

  it('summarises energy, running hours and weekday/weekend schedules of the year', async () => {
    const res = await get('/report/palinsesti?year=2025')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8')
    const rows = tableRows(res.body, 'Summary')
    expect(rows.map((r) => r[0])).toEqual(series.map((s) => s[0]))
    series.forEach(([name, value], k) => {
      const row = rows[k]!
      const values = slots.map(value)
      const peak = Math.max(...values)
      // mean kW per quarter hour: MWh = sum x 0.25 h / 1000
      expect(parseNumber(row[1]!), name).toBeCloseTo((sum(values) * 0.25) / 1000, 2)
      expect(parseNumber(row[2]!), name).toBeCloseTo(values.filter((v) => v > peak * 0.1).length / 4, 2)
      expect(row[3], name).toBe(schedule(value, false))
      expect(row[4], name).toBe(schedule(value, true))
    })
    // chiller 1 runs 06:00-16:00 UTC: 08:00-18:00 on summer-time weekdays; the Sunday of the change shifts it
    expect(rows[0]![3]).toBe('08:00-18:00')
    expect(rows[0]![4]).toBe('07:00-18:00')
  })

  it('profiles mean power by local hour, weekdays apart from weekends', async () => {
    const body = (await get('/report/palinsesti?year=2025')).body
    const profile = tableRows(body, 'Mean power by hour of the day (kW)')
    expect(profile).toHaveLength(24)
    for (const h of [7, 12, 17]) {
      for (const weekend of [false, true]) {
        const inCell = slots.filter((s) => local(s.t).hour === h && local(s.t).weekend === weekend)
        const expected = sum(inCell.map(cf1)) / inCell.length
        expect(parseNumber(profile[h]![weekend ? 2 : 1]!), `${h} ${weekend}`).toBeCloseTo(expected, 1)
      }
    }
    const months = tableRows(body, 'Energy by month (MWh)')
    expect(months[9]![0]).toBe('Oct')
    expect(parseNumber(months[9]![4]!)).toBeCloseTo((sum(slots.map(datacenter)) * 0.25) / 1000, 2)
    expect(months[0]![1]).toBe('n/a')
  })

  it('defaults to the year of the newest data and says when a year has none', async () => {
    expect((await get('/report/palinsesti')).body).toMatch(/^# Operating schedules 2025\n/)
    const empty = await get('/report/palinsesti?year=2024')
    expect(empty.statusCode).toBe(200)
    expect(empty.body).toContain('Chiller plant 1: no data in 2024.')
  })
})

describe('every report as the contract says', () => {
  const plain = (url: string, headers: Record<string, string> = {}) => h.app.inject({ method: 'GET', url, headers })
  const reports = [
    `/report/meter?uuid=${METER_ID}&lang=en`,
    '/report/water?lang=en',
    '/report/pv?lang=en',
    '/report/palinsesti?lang=en',
  ]

  it('answers application/json whose body is one string, the Markdown report; Accept gives Markdown or text', async () => {
    for (const url of reports) {
      const json = await plain(url)
      expect(json.statusCode, url).toBe(200)
      expect(json.headers['content-type'], url).toBe('application/json; charset=utf-8')
      const report = JSON.parse(json.body) as unknown
      expect(typeof report, url).toBe('string')
      const markdown = await plain(url, { accept: 'text/markdown' })
      expect(markdown.headers['content-type'], url).toBe('text/markdown; charset=utf-8')
      expect(markdown.body, url).toBe(report)
      expect(markdown.body, url).toMatch(/^# /)
      const text = await plain(url, { accept: 'text/plain' })
      expect(text.headers['content-type'], url).toBe('text/plain; charset=utf-8')
      expect(text.body, url).toMatch(/^[^#\n].*\n=+\n/)
    }
  })

  it('defaults to the latest complete days holding data and says the coverage at the top', async () => {
    const top = async (url: string) => {
      const lines = (JSON.parse((await plain(url)).body) as string).split('\n\n')
      return { window: lines[1], coverage: lines[2] }
    }
    // the data ends with 2025-10-27, a whole local day: the last 7 days are 21-27 October (a 25-hour day among them)
    for (const url of ['/report/water?lang=en', '/report/pv?lang=en']) {
      const { window, coverage } = await top(url)
      expect(window, url).toMatch(/^From 2025-10-21T00:00:00\+02:00 to 2025-10-27T23:59:59\+01:00 \(inclusive\)/)
      const measured = inRange(Date.parse('2025-10-20T22:00:00Z'), END - 1).length
      expect(coverage, url).toBe(
        `Quarter hours with data: ${measured} of 676 (${((measured / 676) * 100).toFixed(1)} %). Every figure counts ` +
          'the measured quarter hours only: a missing one is never taken as zero.',
      )
    }
    // the meter's last 30 days reach back before its data
    const meter = await top(`/report/meter?uuid=${METER_ID}&lang=en`)
    expect(meter.window).toMatch(/^From 2025-09-28T00:00:00\+02:00 to 2025-10-27T23:59:59\+01:00/)
    expect(meter.coverage).toMatch(/^Quarter hours with data: 764 of 2884 \(26\.5 %\)\. Every figure counts/)
    // no year of the data is complete: the year of the newest data, its coverage said
    const schedules = JSON.parse((await plain('/report/palinsesti?lang=en')).body) as string
    expect(schedules).toMatch(/^# Operating schedules 2025\n/)
    expect(schedules).toContain("Quarter hours with data, of the year's 35040: Chiller plant 1 764 (2.2 %)")
  })

  it('says nothing of missing quarter hours when every one is measured', async () => {
    const body = (await get('/report/pv?start_datetime=2025-10-26&end_datetime=2025-10-26')).body
    expect(body).toContain('Quarter hours with data: 100 of 100 (100.0 %).\n')
    expect(body).not.toContain('never taken as zero')
  })
})

describe('report OpenAPI', () => {
  it('documents each report under Report with its parameters and media types', async () => {
    const doc = (await get('/openapi.json')).json() as {
      paths: Record<
        string,
        {
          get: {
            tags: string[]
            parameters: Array<{ name: string; required?: boolean }>
            responses: Record<string, { content?: Record<string, unknown> }>
          }
        }
      >
    }
    const meter = doc.paths['/report/meter']!.get
    expect(meter.tags).toEqual(['Report'])
    expect(meter.parameters.find((p) => p.name === 'uuid')!.required).toBe(true)
    expect(Object.keys(meter.responses).sort()).toEqual(['200', '304', '404', '422', '429'])
    // JSON first: it is the default
    expect(Object.keys(meter.responses['200']!.content!)).toEqual(['application/json', 'text/markdown', 'text/plain'])
    expect(doc.paths['/report/palinsesti']!.get.parameters.map((p) => p.name)).toEqual([
      'year',
      'timezone',
      'format',
      'lang',
    ])
    for (const path of ['/report/water', '/report/pv']) {
      expect(doc.paths[path]!.get.parameters.map((p) => p.name)).toEqual([
        'start_datetime',
        'end_datetime',
        'timezone',
        'format',
        'lang',
      ])
    }
  })
})

describe('reports in Italian (the default)', () => {
  const italian = (url: string) => h.app.inject({ method: 'GET', url, headers: { accept: 'text/markdown' } })
  /** `1.234,56` -> 1234.56 */
  const parseItalian = (text: string) => Number(text.replace(/\./g, '').replace(',', '.'))

  it('writes headings, labels and numbers the Italian way', async () => {
    const res = await italian('/report/pv?start_datetime=2025-10-20&end_datetime=2025-10-27')
    expect(res.statusCode).toBe(200)
    const body = res.body
    expect(body).toMatch(/^# Rapporto fotovoltaico\n/)
    expect(body).toContain('Dal 2025-10-20T00:00:00+02:00 al 2025-10-27T23:59:59+01:00 (estremi inclusi)')
    const line = body.split('\n').find((l) => l.startsWith('- Produzione totale: '))!
    const total = sum(ALL.map(totPv))
    expect(total).toBeGreaterThan(1000)
    expect(line).toMatch(/^- Produzione totale: \d{1,3}(\.\d{3})+,\d{2} kWh \(/)
    expect(parseItalian(line.slice('- Produzione totale: '.length, line.indexOf(' kWh')))).toBeCloseTo(total * 0.25, 2)
    expect(body).toContain('## Bilancio energetico dell’edificio Aule P')
  })

  it('names the schedules, months and fountains in Italian', async () => {
    const schedules = (await italian('/report/palinsesti?year=2025')).body
    expect(schedules).toMatch(/^# Palinsesti di funzionamento 2025\n/)
    expect(schedules).toContain('| Centrale frigo 1 (cf1_tot) |')
    expect(schedules).toContain('| Ott |')
    expect(schedules).toContain('| sempre |')
    const water = (await italian('/report/water?format=text')).body
    expect(water).toMatch(/^Rapporto acqua\n==============\n/)
    expect(water).toContain('Fontanella Corridoio nord')
    const meter = (await italian(`/report/meter?uuid=${METER_ID}`)).body
    expect(meter).toMatch(/^# Rapporto contatore: 860\) Quadro generale Aule P\n/)
    expect(meter).toContain('Etichette di qualità: estimated')
  })
})
