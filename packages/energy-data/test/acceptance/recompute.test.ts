/**
 * Every chart series and every report figure, recomputed for a fixed seeded window from what a
 * client can read - the 15-minute rows of `/data/*` and the units of `/metadata/meters` - with
 * this file's own arithmetic and Intl's calendar, never the service's modules or SQL.
 *
 * The window: ten days of the demo estate, 20 to 30 October 2025 (UTC), over the autumn change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, seeded, startHarness } from '../harness.ts'
import {
  daysEndingWith,
  expectPrinted,
  extreme,
  lastCompleteDay,
  listLine,
  local,
  QUARTER,
  QUARTER_HOURS,
  quartersOfDays,
  sum,
  tableRows,
} from '../support.ts'

type Row = Record<string, number | string | null> & { t: number }

let h: Harness
let key: string
/** The 15-minute rows of every group, by group. */
const groups = new Map<string, Row[]>()
const units = new Map<number, string>()
/** Per-meter rows of 860 (an energy meter) and 861 (a power meter), every tag. */
const meters = new Map<number, Row[]>()

const NOW = Date.parse('2025-10-30T09:00:00Z')
/** The five drinking fountains of the water group. */
const FOUNTAINS = [
  'tot_font_aula_magna',
  'tot_font_aule_p',
  'tot_font_corr_denerg',
  'tot_font_corr_nord',
  'tot_font_corr_sud',
]
const SEEDED = { from: '2025-10-20', to: '2025-10-30' }

async function json<T>(url: string, headers: Record<string, string> = {}): Promise<T> {
  const res = await h.app.inject({ url, headers: { 'x-api-key': key, ...headers } })
  expect(res.statusCode, url).toBe(200)
  return res.json() as T
}

async function markdown(url: string): Promise<string> {
  const res = await h.app.inject({
    url: `${url}${url.includes('?') ? '&' : '?'}lang=en`,
    headers: { accept: 'text/markdown' },
  })
  expect(res.statusCode, url).toBe(200)
  return res.body
}

const rowsOf = (items: Array<Record<string, unknown>>): Row[] =>
  items.map((r) => ({ ...(r as Record<string, number | string | null>), t: Date.parse(r.time_15m as string) }))

beforeAll(async () => {
  h = await startHarness({ data: seeded({ ...SEEDED, seed: '3' }), now: () => NOW })
  key = await h.key(['*'])
  const window = 'start_datetime=2025-01-01&end_datetime=2025-12-31'
  for (const group of ['pv', 'aulep', 'water', 'weather', 'centrali_frigo', 'datacenter_1']) {
    groups.set(group, rowsOf(await json(`/data/${group}?${window}`)))
  }
  const tags = ['ok', 'estimated', 'interpolated', 'suspect', 'invalid'].map((t) => `tag=${t}`).join('&')
  for (const id of [860, 861]) meters.set(id, rowsOf(await json(`/data/meters?ids=${id}&${tags}&${window}`)))
  for (const m of await json<Array<{ id: number; unit_id: string }>>('/metadata/meters/')) units.set(m.id, m.unit_id)
})
afterAll(async () => h?.close())

const group = (name: string) => groups.get(name) as Row[]
const value = (row: Row | undefined, column: string) => (row ? (row[column] as number | null) : null)
const present = (rows: Row[], column: string) => rows.filter((r) => r[column] !== null)
const columnSum = (rows: Row[], column: string) => sum(present(rows, column).map((r) => r[column] as number))
const newest = (rows: Row[]) => Math.max(...rows.map((r) => r.t))

describe('the units a client reads', () => {
  it('come from the meters the group columns mirror', () => {
    // pv and aulep plant columns and the chillers mirror power meters; the water meters are volumes
    // per quarter hour; the main-panel meter 860 an energy per quarter hour
    expect([861, 871, 881, 891, 900, 910, 911, 912].map((id) => units.get(id))).toEqual(Array(8).fill('unit:KiloW'))
    expect(units.get(920)).toBe('unit:M3')
    expect(units.get(931)).toBe('unit:W-PER-M2')
    expect(units.get(860)).toBe('unit:KiloW-HR')
    // and the mirrors are the same readings: the column a chart draws is the meter's series
    const pv = new Map(group('pv').map((r) => [r.t, r]))
    const inverter = (meters.get(861) as Row[]).filter((r) => r.tag === 'ok' && pv.has(r.t))
    expect(inverter.length).toBeGreaterThan(800)
    for (const r of inverter) expect(value(pv.get(r.t), 'tot_pv_aule_p_i1')).toBe(r.avg_value)
  })
})

describe('charts', () => {
  interface Chart {
    data: { labels: string[]; datasets: Array<{ label: string; data: Array<number | null> }> }
    options: { plugins: { subtitle: { text: string } }; scales: { y: { title: { text: string } } } }
  }
  const chart = (name: string) => json<Chart>(`/chart/${name}?lang=en`)

  /** The 672 quarter hours ending with the newest row of a group. */
  const slotsOf = (rows: Row[]) => Array.from({ length: 672 }, (_, k) => newest(rows) - (671 - k) * QUARTER)
  const expectSeries = (actual: Array<number | null>, expected: Array<number | null>, what: string) => {
    expect(actual, what).toHaveLength(expected.length)
    expected.forEach((v, k) => {
      if (v === null) expect(actual[k], `${what} #${k}`).toBeNull()
      else expect(actual[k] as number, `${what} #${k}`).toBeCloseTo(v, 3)
    })
  }

  /** A 7-day chart, and the rows of its group by quarter hour over the chart's 672 quarter hours. */
  const quarterChart = async (name: string, groupName: string) => {
    const rows = group(groupName)
    return { byTime: new Map(rows.map((r) => [r.t, r])), slots: slotsOf(rows), body: await chart(name) }
  }

  it('fotovoltaico draws each plant in kW, as measured, over the 672 quarter hours ending with the data', async () => {
    const { byTime, slots, body } = await quarterChart('fotovoltaico', 'pv')
    expect(body.options.scales.y.title.text).toBe('Power (kW)')
    expect(body.data.labels).toHaveLength(672)
    // seven times 24 hours back from the end of the data, across the 25-hour day: from 02:00 summer time
    const shown = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Rome',
      day: '2-digit',
      month: '2-digit',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
    const end = slots[671]! + QUARTER
    expect(body.options.plugins.subtitle.text).toBe(
      `From ${shown.format(slots[0]!)} to ${shown.format(end)} (Europe/Rome)`,
    )
    expect(body.options.plugins.subtitle.text).toBe('From 23/10/2025, 02:00 to 30/10/2025, 01:00 (Europe/Rome)')
    const plants = ['tot_pv_aule_p', 'tot_pv_aule_r', 'tot_pv_castelfidardo', 'tot_pv_cit', 'tot_pv_ec', 'tot_pv_i3p']
    plants.forEach((plant, k) => {
      expectSeries(
        body.data.datasets[k]!.data,
        slots.map((t) => value(byTime.get(t), plant)),
        plant,
      )
    })
  })

  it('bilancio draws Aule P production, grid withdrawal and consumption in kW', async () => {
    const { byTime, slots, body } = await quarterChart('bilancio', 'aulep')
    const [pv, grid, load] = body.data.datasets
    const production = slots.map((t) => value(byTime.get(t), 'tot_pv_prod'))
    const consumption = slots.map((t) => value(byTime.get(t), 'consumo_aula_1p'))
    expectSeries(pv!.data, production, 'production')
    expectSeries(load!.data, consumption, 'consumption')
    expectSeries(
      grid!.data,
      slots.map((_, k) => {
        const [p, c] = [production[k], consumption[k]]
        return p === null || p === undefined || c === null || c === undefined ? null : Math.max(c - p, 0)
      }),
      'grid withdrawal',
    )
  })

  it('acqua draws the m³ of each of the last 30 complete local days', async () => {
    const rows = group('water')
    const days = daysEndingWith(lastCompleteDay(newest(rows)), 30)
    const body = await chart('acqua')
    expect(body.data.labels).toHaveLength(30)
    expect(body.options.scales.y.title.text).toBe('Volume (m³/day)')
    const onDay = (day: string) => rows.filter((r) => local(r.t).date === day)
    expectSeries(
      body.data.datasets[0]!.data,
      days.map((d) => (onDay(d).length ? columnSum(onDay(d), 'tot_sede_centrale') : null)),
      'main site',
    )
    expectSeries(
      body.data.datasets[1]!.data,
      days.map((d) => (onDay(d).length ? sum(FOUNTAINS.map((f) => columnSum(onDay(d), f))) : null)),
      'fountains',
    )
    // the autumn change is a 25-hour day, all of it counted
    expect(onDay('2025-10-26')).toHaveLength(100)
  })

  it('fontanelle draws each fountain in L/h: the m³ of a quarter hour x 1000 / 0.25 h', async () => {
    const { byTime, slots, body } = await quarterChart('fontanelle', 'water')
    expect(body.options.scales.y.title.text).toBe('Flow (L/h)')
    FOUNTAINS.forEach((f, k) => {
      expectSeries(
        body.data.datasets[k]!.data,
        slots.map((t) => {
          const v = value(byTime.get(t), f)
          return v === null ? null : (v * 1000) / QUARTER_HOURS
        }),
        f,
      )
    })
  })
})

/** The report's window: whole local days, the first and last instants, and every quarter hour in them. */
function reportDays(latest: number, count: number) {
  const days = daysEndingWith(lastCompleteDay(latest), count)
  const quarters = quartersOfDays(days)
  const inWindow = (t: number) => days.includes(local(t).date)
  const line = `From ${local(quarters[0]!).iso} to ${local(quarters[quarters.length - 1]! + QUARTER - 1000).iso} (inclusive)`
  return { days, quarters, inWindow, line }
}

/**
 * A report over the last `count` complete days of `all`: its window line and the coverage at its
 * top checked, and the rows of the window for the figures.
 */
async function dayReport(url: string, all: Row[], count: number) {
  const { days, quarters, inWindow, line } = reportDays(newest(all), count)
  const rows = all.filter((r) => inWindow(r.t)).sort((a, b) => a.t - b.t)
  const body = await markdown(url)
  expect(body, url).toContain(line)
  const coverage = body.split('\n').find((l) => l.startsWith('Quarter hours with data: '))
  expect(coverage, url).toContain(`Quarter hours with data: ${rows.length} of ${quarters.length} (`)
  expectPrinted(coverage!.split('(')[1]!, (rows.length / quarters.length) * 100, 'coverage %')
  expect(coverage!.includes('never taken as zero'), url).toBe(rows.length < quarters.length)
  return { days, quarters, rows, body, inWindow }
}

describe('/report/meter', () => {
  for (const id of [860, 861]) {
    it(`meter ${id}: coverage, quality, statistics, its total and every day, from its quarter hours and unit`, async () => {
      const { days, quarters, rows, body } = await dayReport(`/report/meter?uuid=${id}`, meters.get(id) as Row[], 30)
      expect(listLine(body, 'Missing quarter hours')).toBe(String(quarters.length - rows.length))
      const steps = rows.slice(1).map((r, k) => r.t - rows[k]!.t)
      expectPrinted(listLine(body, 'Longest interval between two readings'), Math.max(...steps) / 60_000, 'longest')
      expectPrinted(listLine(body, 'Raw samples'), sum(rows.map((r) => r.count_value as number)), 'samples')
      const tags = new Map<string, number>()
      for (const r of rows) tags.set(r.tag as string, (tags.get(r.tag as string) ?? 0) + 1)
      expect(listLine(body, 'Data-quality tags')).toMatch(
        new RegExp(
          `^${[...tags.entries()]
            .sort()
            .map(([t, n]) => `${t} ${n}`)
            .join(', ')} \\(`,
        ),
      )

      // the meter's unit from /metadata decides how its quarter hours add up
      const unit = units.get(id)
      const energyOf = (values: number[]) => (unit === 'unit:KiloW-HR' ? sum(values) : sum(values) * QUARTER_HOURS)
      const suffix = unit === 'unit:KiloW-HR' ? 'kWh per quarter hour' : 'kW'
      // the figures count the quarter hours tagged ok, as /data/meters by default; each weighs the same
      const counted = rows.filter((r) => r.tag === 'ok')
      // an energy meter's quarter-hour value is its energy, sum_value (the sum of its increments)
      const quarterValue = (r: Row) => (unit === 'unit:KiloW-HR' ? r.sum_value : r.avg_value) as number
      const lowOf = (r: Row) => (unit === 'unit:KiloW-HR' ? r.sum_value : r.min_value) as number | null
      const highOf = (r: Row) => (unit === 'unit:KiloW-HR' ? r.sum_value : r.max_value) as number | null
      const meanOf = (rs: Row[]) => sum(rs.map(quarterValue)) / rs.length
      const mean = listLine(body, 'Mean of the quarter hours')
      expect(mean).toContain(` ${suffix} (`)
      expectPrinted(mean, meanOf(counted), 'mean')
      const min = extreme(counted, lowOf, (r) => r.t, false)!
      const max = extreme(counted, highOf, (r) => r.t)!
      expect(listLine(body, 'Minimum')).toContain(`${suffix} at ${local(min.at).iso}`)
      expectPrinted(listLine(body, 'Minimum'), min.value, 'minimum')
      expect(listLine(body, 'Maximum')).toContain(`${suffix} at ${local(max.at).iso}`)
      expectPrinted(listLine(body, 'Maximum'), max.value, 'maximum')
      const energy = listLine(body, 'Energy')
      expect(energy).toMatch(/ kWh \(/)
      expectPrinted(energy, energyOf(counted.map(quarterValue)), 'energy')

      const table = tableRows(body, 'By day')
      const withData = days.filter((d) => counted.some((r) => local(r.t).date === d))
      expect(table.map((r) => r[0])).toEqual(withData)
      for (const [day, count, dayMean, dayMin, dayMax, dayEnergy] of table) {
        const inDay = counted.filter((r) => local(r.t).date === day)
        expect(Number(count), day).toBe(inDay.length)
        expectPrinted(dayMean!, meanOf(inDay), `${day} mean`)
        expectPrinted(dayMin!, Math.min(...inDay.map((r) => lowOf(r) as number)), `${day} min`)
        expectPrinted(dayMax!, Math.max(...inDay.map((r) => highOf(r) as number)), `${day} max`)
        expectPrinted(dayEnergy!, energyOf(inDay.map(quarterValue)), `${day} energy`)
      }
    })
  }
})

describe('/report/water', () => {
  it('volumes, flows, the night baseline and every day, from the quarter-hour volumes', async () => {
    const { days, rows, body } = await dayReport('/report/water', group('water'), 7)
    const meters = ['tot_sede_centrale', ...FOUNTAINS]
    const flow = (m3: number) => m3 / QUARTER_HOURS
    const night = (column: string) => present(rows, column).filter((r) => [2, 3].includes(local(r.t).hour))
    const meanOf = (rs: Row[], column: string) => columnSum(rs, column) / present(rs, column).length
    const main = columnSum(rows, 'tot_sede_centrale')
    const fountains = sum(meters.slice(1).map((m) => columnSum(rows, m)))
    expectPrinted(listLine(body, 'Main site total'), main, 'main total')
    expect(listLine(body, 'Main site total')).toContain(`its ${present(rows, 'tot_sede_centrale').length} measured`)
    expectPrinted(listLine(body, 'Drinking fountains total'), fountains, 'fountains')
    expectPrinted(
      listLine(body, 'Drinking fountains total').split('; ')[1]!,
      (fountains / main) * 100,
      'fountains share',
    )
    const peak = extreme(
      rows,
      (r) => r.tot_sede_centrale as number | null,
      (r) => r.t,
    )!
    expectPrinted(listLine(body, 'Main site peak'), flow(peak.value), 'peak')
    expect(listLine(body, 'Main site peak')).toContain(`in the quarter hour starting ${local(peak.at).iso}`)
    const baseline = listLine(body, 'Main site night baseline')
    expectPrinted(baseline, flow(meanOf(night('tot_sede_centrale'), 'tot_sede_centrale')), 'night baseline')
    expectPrinted(
      baseline.split('; ')[1]!,
      (meanOf(night('tot_sede_centrale'), 'tot_sede_centrale') / meanOf(rows, 'tot_sede_centrale')) * 100,
      'night share',
    )
    const table = tableRows(body, 'By meter')
    meters.forEach((m, k) => {
      const [, total, mean, peakFlow, peakAt, nightFlow, count] = table[k]!
      const top = extreme(
        rows,
        (r) => r[m] as number | null,
        (r) => r.t,
      )!
      expectPrinted(total!, columnSum(rows, m), `${m} total`)
      expectPrinted(mean!, flow(meanOf(rows, m)), `${m} mean flow`)
      expectPrinted(peakFlow!, flow(top.value), `${m} peak`)
      expect(peakAt, m).toBe(local(top.at).iso)
      expectPrinted(nightFlow!, flow(meanOf(night(m), m)), `${m} night`)
      expect(Number(count), m).toBe(present(rows, m).length)
    })
    const byDay = tableRows(body, 'By day')
    expect(byDay.map((r) => r[0])).toEqual(days)
    for (const [day, count, ...volumes] of byDay) {
      const inDay = rows.filter((r) => local(r.t).date === day)
      expect(Number(count), day).toBe(inDay.length)
      meters.forEach((m, k) => {
        expectPrinted(volumes[k]!, columnSum(inDay, m), `${day} ${m}`)
      })
    }
  })
})

describe('/report/pv', () => {
  it('energy and peaks per plant, irradiation, the Aule P balance and every day, from mean kW per quarter hour', async () => {
    const { days, rows: pv, body, inWindow } = await dayReport('/report/pv', group('pv'), 7)
    const energy = (rows: Row[], column: string) => columnSum(rows, column) * QUARTER_HOURS
    const total = energy(pv, 'tot_pv')
    expectPrinted(listLine(body, 'Total production'), total, 'total production')
    const top = extreme(
      pv,
      (r) => r.tot_pv as number | null,
      (r) => r.t,
    )!
    expectPrinted(listLine(body, 'Peak power'), top.value, 'peak')
    expect(listLine(body, 'Peak power')).toContain(`kW in the quarter hour starting ${local(top.at).iso}`)
    const weather = group('weather').filter((r) => inWindow(r.t))
    expectPrinted(
      listLine(body, 'Global irradiation on the horizontal plane'),
      (columnSum(weather, 'global_solar_radiation') * QUARTER_HOURS) / 1000,
      'irradiation',
    )
    const plants = ['tot_pv_aule_p', 'tot_pv_aule_r', 'tot_pv_castelfidardo', 'tot_pv_cit', 'tot_pv_ec', 'tot_pv_i3p']
    const table = tableRows(body, 'Production')
    plants.forEach((p, k) => {
      const [, e, share, peak, peakAt, count] = table[k]!
      const best = extreme(
        pv,
        (r) => r[p] as number | null,
        (r) => r.t,
      )!
      expectPrinted(e!, energy(pv, p), `${p} energy`)
      expectPrinted(share!, (energy(pv, p) / total) * 100, `${p} share`)
      expectPrinted(peak!, best.value, `${p} peak`)
      expect(peakAt, p).toBe(local(best.at).iso)
      expect(Number(count), p).toBe(present(pv, p).length)
    })

    const both = group('aulep').filter(
      (r) => inWindow(r.t) && r.tot_pv_prod !== null && r.consumo_aula_1p !== null,
    ) as Array<Row & { tot_pv_prod: number; consumo_aula_1p: number }>
    const kwh = (values: number[]) => sum(values) * QUARTER_HOURS
    const production = kwh(both.map((r) => r.tot_pv_prod))
    const consumption = kwh(both.map((r) => r.consumo_aula_1p))
    const used = kwh(both.map((r) => Math.min(r.tot_pv_prod, r.consumo_aula_1p)))
    expect(listLine(body, 'Quarter hours with production and consumption')).toBe(String(both.length))
    expectPrinted(listLine(body, 'PV production'), production, 'balance production')
    expectPrinted(listLine(body, 'Consumption'), consumption, 'consumption')
    expectPrinted(listLine(body, 'PV used on site'), used, 'used on site')
    expectPrinted(
      listLine(body, 'PV surplus fed to the grid'),
      kwh(both.map((r) => Math.max(r.tot_pv_prod - r.consumo_aula_1p, 0))),
      'surplus',
    )
    expectPrinted(
      listLine(body, 'Grid withdrawal'),
      kwh(both.map((r) => Math.max(r.consumo_aula_1p - r.tot_pv_prod, 0))),
      'grid',
    )
    expectPrinted(
      listLine(body, 'Self-consumption (PV used on site / PV production)'),
      (used / production) * 100,
      'self-consumption',
    )
    expectPrinted(
      listLine(body, 'Self-sufficiency (PV used on site / consumption)'),
      (used / consumption) * 100,
      'self-sufficiency',
    )
    // the two Aule P productions, each with its quarter hours: the report says why they differ
    const note = body.split('\n').find((l) => l.startsWith('The Aule P production of the plant table'))!
    const [plantFigure, balanceFigure] = [...note.matchAll(/\(([\d,.]+) kWh, [^,]+, (\d+) quarter hours\)/g)]
    expectPrinted(plantFigure![1]!, energy(pv, 'tot_pv_aule_p'), 'plant table Aule P')
    expect(Number(plantFigure![2])).toBe(present(pv, 'tot_pv_aule_p').length)
    expectPrinted(balanceFigure![1]!, production, 'balance Aule P')
    expect(Number(balanceFigure![2])).toBe(both.length)
    // and no second surplus figure beside the computed one
    expect(body).not.toMatch(/metered surplus: /)

    const byDay = tableRows(body, 'By day')
    expect(byDay.map((r) => r[0])).toEqual(days)
    for (const [day, count, dayTotal, ...perPlant] of byDay) {
      const inDay = pv.filter((r) => local(r.t).date === day)
      expect(Number(count), day).toBe(inDay.length)
      expectPrinted(dayTotal!, energy(inDay, 'tot_pv'), `${day} total`)
      plants.forEach((p, k) => {
        expectPrinted(perPlant[k]!, energy(inDay, p), `${day} ${p}`)
      })
    }
  })
})

describe('/report/palinsesti', () => {
  const SERIES: Array<[string, string, string]> = [
    ['Chiller plant 1', 'centrali_frigo', 'cf1_tot'],
    ['Chiller plant 2', 'centrali_frigo', 'cf2_tot'],
    ['Chiller plant 3', 'centrali_frigo', 'cf3_tot'],
    ['Data centre', 'datacenter_1', 'tot_dc'],
    ['Aule P building', 'aulep', 'consumo_aula_1p'],
  ]
  /** Quarter hours of 2025 in Rome: the year holds one 23-hour and one 25-hour day. */
  const YEAR_QUARTERS = 365 * 96

  /** Local hours in which the series runs (> 10 % of its peak) in at least half of its quarter hours. */
  function schedule(rows: Row[], column: string, peak: number, weekend: boolean): string {
    const shares: Array<number | null> = []
    for (let hour = 0; hour < 24; hour++) {
      const cell = present(rows, column).filter((r) => local(r.t).hour === hour && local(r.t).weekend === weekend)
      shares.push(cell.length ? cell.filter((r) => (r[column] as number) > peak * 0.1).length / cell.length : null)
    }
    if (shares.every((s) => s === null)) return 'no data'
    const measured = shares.filter((s) => s !== null).length
    if (measured < 24) return `incomplete data (${measured} of 24 hours)`
    const on = shares.map((s) => (s as number) >= 0.5)
    if (on.every(Boolean)) return 'always'
    if (!on.some(Boolean)) return 'never'
    const ranges: string[] = []
    for (let hour = 0; hour < 24; hour++) {
      if (on[hour] && !on[hour - 1]) {
        let end = hour
        while (end < 24 && on[end]) end++
        ranges.push(`${String(hour).padStart(2, '0')}:00-${String(end).padStart(2, '0')}:00`)
      }
    }
    return ranges.join(', ')
  }

  it('energy, running hours, schedules, hourly profiles and months of the year, from mean kW per quarter hour', async () => {
    const body = await markdown('/report/palinsesti')
    // no year is complete within the data (it ends in October): the year of the newest data
    expect(body).toMatch(/^# Operating schedules 2025\n/)
    expect(body).toContain(`the whole year (${YEAR_QUARTERS} quarter hours)`)
    const summary = tableRows(body, 'Summary')
    const profile = tableRows(body, 'Mean power by hour of the day (kW)')
    const months = tableRows(body, 'Energy by month (MWh)')
    const running = tableRows(body, 'Running hours by month')
    SERIES.forEach(([name, groupName, column], k) => {
      const rows = present(group(groupName), column)
      const peak = Math.max(...rows.map((r) => r[column] as number))
      const isRunning = (r: Row) => (r[column] as number) > peak * 0.1
      const mwh = (rs: Row[]) => (columnSum(rs, column) * QUARTER_HOURS) / 1000
      expect(body).toContain(`${name} ${rows.length} (`)
      const [label, energy, hours, weekday, weekend, coverage] = summary[k]!
      expect(label).toBe(`${name} (${column})`)
      expectPrinted(energy!, mwh(rows), `${name} energy`)
      expectPrinted(hours!, rows.filter(isRunning).length * QUARTER_HOURS, `${name} running hours`)
      expect(weekday, `${name} weekdays`).toBe(schedule(rows, column, peak, false))
      expect(weekend, `${name} weekends`).toBe(schedule(rows, column, peak, true))
      expectPrinted(coverage!, (rows.length / YEAR_QUARTERS) * 100, `${name} coverage`)
      for (let hour = 0; hour < 24; hour++) {
        for (const [offset, isWeekend] of [
          [1, false],
          [2, true],
        ] as const) {
          const cell = rows.filter((r) => local(r.t).hour === hour && local(r.t).weekend === isWeekend)
          expectPrinted(
            profile[hour]![1 + 2 * k + offset - 1]!,
            cell.length ? columnSum(cell, column) / cell.length : null,
            `${name} ${hour}h ${isWeekend ? 'weekend' : 'weekday'}`,
          )
        }
      }
      for (let month = 1; month <= 12; month++) {
        const inMonth = rows.filter((r) => Number(local(r.t).date.slice(5, 7)) === month)
        expectPrinted(months[month - 1]![k + 1]!, inMonth.length ? mwh(inMonth) : null, `${name} month ${month}`)
        expectPrinted(
          running[month - 1]![k + 1]!,
          inMonth.length ? inMonth.filter(isRunning).length * QUARTER_HOURS : null,
          `${name} running in month ${month}`,
        )
      }
    })
  })

  it('defaults to the last complete year holding data, not to a year just begun', async () => {
    // a first quarter hour of 2026: 2026 holds data but is not complete; 2025 is, and holds data
    const at = new Date('2026-01-05T10:00:00Z')
    await h.database.pool.query('insert into centrali_frigo_15m (time_15m, cf1_tot) values ($1, 1)', [at])
    try {
      expect(await markdown('/report/palinsesti')).toMatch(/^# Operating schedules 2025\n/)
    } finally {
      await h.database.pool.query('delete from centrali_frigo_15m where time_15m = $1', [at])
    }
  })
})
