/** The four public reports: resolve the range, aggregate in the database, lay out the blocks. */
import type { Kysely } from 'kysely'
import type { Language } from '../charts/i18n.ts'
import type { EnergyDatabase } from '../db/schema.ts'
import { DetailError } from '../errors.ts'
import {
  aulepBalance,
  columnSummaries,
  dailyTotals,
  findMeter,
  latestMeterQuarter,
  latestQuarter,
  meterDays,
  meterStats,
  type ScheduleCell,
  scheduleCells,
} from '../repositories/views.ts'
import type { Block } from './document.ts'
import { meterReport } from './meter-report.ts'
import { foldSchedule, palinsestiReport, RUNNING_SHARE, SCHEDULE_SERIES } from './palinsesti-report.ts'
import { PV_COLUMNS, pvReport } from './pv-report.ts'
import { type ReportWindowQuery, resolveReportWindow, resolveZone } from './report-window.ts'
import { WATER_METERS, waterReport } from './water-report.ts'
import { localMidnight, localParts } from './zoned-time.ts'

type Db = Kysely<EnergyDatabase>
type ReportQuery = ReportWindowQuery & { lang?: Language }

export async function buildMeterReport(db: Db, uuid: number, query: ReportQuery): Promise<Block[]> {
  const meter = await findMeter(db, uuid)
  if (!meter) throw new DetailError(404, `Meter ${uuid} not found`)
  const window = resolveReportWindow(query, await latestMeterQuarter(db, uuid))
  const [stats, days] = await Promise.all([
    meterStats(db, uuid, window.from, window.to),
    meterDays(db, uuid, window.from, window.to, window.zone),
  ])
  return meterReport({ meter, window, stats, days, lang: query.lang ?? 'it' })
}

export async function buildWaterReport(db: Db, query: ReportQuery): Promise<Block[]> {
  const window = resolveReportWindow(query, await latestQuarter(db, 'water'))
  const [summary, days] = await Promise.all([
    columnSummaries(db, 'water', WATER_METERS, window.from, window.to, window.zone),
    // dailyTotals takes an exclusive end
    dailyTotals(db, 'water', WATER_METERS, window.from, window.to + 1, window.zone),
  ])
  return waterReport({ window, quarters: summary.quarters, summaries: summary.columns, days, lang: query.lang ?? 'it' })
}

export async function buildPvReport(db: Db, query: ReportQuery): Promise<Block[]> {
  const window = resolveReportWindow(query, await latestQuarter(db, 'pv'))
  const [summary, days, balance, weather] = await Promise.all([
    columnSummaries(db, 'pv', PV_COLUMNS, window.from, window.to, window.zone),
    dailyTotals(db, 'pv', PV_COLUMNS, window.from, window.to + 1, window.zone),
    aulepBalance(db, window.from, window.to),
    columnSummaries(db, 'weather', ['global_solar_radiation'], window.from, window.to, window.zone),
  ])
  return pvReport({
    window,
    quarters: summary.quarters,
    summaries: summary.columns,
    days,
    balance,
    radiation: weather.columns.global_solar_radiation,
    lang: query.lang ?? 'it',
  })
}

/** The year of the newest chiller data in `zone`, else the current year. */
async function defaultYear(db: Db, zone: string): Promise<number> {
  const latest = (await latestQuarter(db, 'centrali_frigo')) ?? Date.now()
  return localParts(latest, zone).year
}

export async function buildPalinsestiReport(
  db: Db,
  query: { year?: number; timezone?: string; lang?: Language },
): Promise<Block[]> {
  const lang = query.lang ?? 'it'
  const zone = resolveZone(query.timezone)
  const year = query.year ?? (await defaultYear(db, zone))
  const from = localMidnight(`${year}-01-01`, zone)
  const to = localMidnight(`${year + 1}-01-01`, zone)
  const byGroup = <G extends (typeof SCHEDULE_SERIES)[number]['group']>(group: G) =>
    SCHEDULE_SERIES.filter((s) => s.group === group).map((s) => s.column)
  // one grouped query per table, one after the other: each scans a year of its table once
  const chillers = await scheduleCells(
    db,
    'centrali_frigo',
    byGroup('centrali_frigo') as Array<'cf1_tot' | 'cf2_tot' | 'cf3_tot'>,
    from,
    to,
    zone,
    RUNNING_SHARE,
  )
  const datacenter = await scheduleCells(db, 'datacenter_1', ['tot_dc'], from, to, zone, RUNNING_SHARE)
  const aulep = await scheduleCells(db, 'aulep', ['consumo_aula_1p'], from, to, zone, RUNNING_SHARE)
  const cells: Record<(typeof SCHEDULE_SERIES)[number]['group'], Array<ScheduleCell<string>>> = {
    centrali_frigo: chillers,
    datacenter_1: datacenter,
    aulep,
  }
  const series = SCHEDULE_SERIES.map((s) => foldSchedule(cells[s.group], s.column, s.name[lang]))
  return palinsestiReport({ year, zone, from, to, series, lang })
}
