/** The four public reports: resolve the range, aggregate in the database, lay out the blocks. */
import type { Kysely } from 'kysely'
import type pg from 'pg'
import { seriesNamed } from '../catalogue/groups.ts'
import { type Commodity, commodityOf, conversionFactor, KINDS, QUARTER_SECONDS } from '../catalogue/quantities.ts'
import type { Language } from '../charts/i18n.ts'
import type { EnergyDatabase } from '../db/schema.ts'
import { DAY_MS, localMidnight, localParts, QUARTER_MS } from '../domain/time.ts'
import {
  type DayWindow,
  invalid,
  lastDaysDefaults,
  resolveWindow,
  resolveZone,
  type WindowQuery,
  wholeDays,
} from '../domain/window.ts'
import { DetailError } from '../errors.ts'
import { pricedDays } from '../repositories/costs.ts'
import { findMeter } from '../repositories/metadata.ts'
import {
  aulepBalance,
  columnSummaries,
  dailyTotals,
  holdsData,
  latestMeterQuarter,
  latestQuarter,
  latestQuarterOf,
  meterDays,
  meterStats,
  type ScheduleCell,
  scheduleCells,
} from '../repositories/views.ts'
import type { Block } from './document.ts'
import { meterReport } from './meter-report.ts'
import { foldSchedule, palinsestiReport, RUNNING_SHARE, SCHEDULE_SERIES } from './palinsesti-report.ts'
import { PV_COLUMNS, pvReport } from './pv-report.ts'
import { WATER_METERS, waterReport } from './water-report.ts'

type Db = Kysely<EnergyDatabase>
type ReportQuery = WindowQuery & { lang?: Language }

/** Where a report stands: the service's zone and clock. */
export interface ReportContext {
  db: Db
  /** The pool under `db`, for the priced reads (their price arrays). */
  pool: pg.Pool
  zone: string
  now: number
}

/** Default ranges: the last complete local days holding data. */
export const DEFAULT_REPORT_DAYS = 7
export const DEFAULT_METER_DAYS = 30
/** Longest range one report covers: a leap year and a day. */
export const MAX_REPORT_DAYS = 367

/** The whole local days a report covers (the days holding both bounds); at most MAX_REPORT_DAYS. */
function reportDays(context: ReportContext, query: WindowQuery, latest: number | undefined, count: number): DayWindow {
  const zone = resolveZone(query.timezone, context.zone)
  const bounds = resolveWindow(query, { zone, defaults: lastDaysDefaults(count, latest, context.now, zone) })
  const tooLong = invalid(
    'end_datetime',
    `The range exceeds ${MAX_REPORT_DAYS} days: narrow start_datetime/end_datetime or ask one report per year`,
  )
  // checked on the instants first: a window of centuries is refused before its days are listed
  if (bounds.endMs - bounds.startMs > MAX_REPORT_DAYS * DAY_MS) throw tooLong
  const window = wholeDays(bounds)
  if (window.days.length > MAX_REPORT_DAYS) throw tooLong
  return window
}

export async function buildMeterReport(context: ReportContext, meterId: number, query: ReportQuery): Promise<Block[]> {
  const { db } = context
  const meter = await findMeter(db, meterId)
  if (!meter) throw new DetailError(404, `Meter ${meterId} not found`)
  const window = reportDays(context, query, await latestMeterQuarter(db, meterId), DEFAULT_METER_DAYS)
  const [stats, days] = await Promise.all([
    meterStats(db, meterId, window.from, window.to),
    meterDays(db, meterId, window.from, window.to, window.zone),
  ])
  return meterReport({ meter, window, stats, days, lang: query.lang ?? 'it' })
}

export async function buildWaterReport(context: ReportContext, query: ReportQuery): Promise<Block[]> {
  const { db } = context
  const window = reportDays(context, query, await latestQuarter(db, 'water'), DEFAULT_REPORT_DAYS)
  const [summary, days, cost] = await Promise.all([
    columnSummaries(db, 'water', WATER_METERS, window.from, window.to, window.zone),
    dailyTotals(db, 'water', WATER_METERS, window.from, window.to, window.zone),
    pricedDays(context.pool, pricedSeries('water', 'tot_sede_centrale', 'volume'), window.from, window.to, window.zone),
  ])
  return waterReport({
    window,
    quarters: summary.quarters,
    summaries: summary.columns,
    days,
    cost,
    lang: query.lang ?? 'it',
  })
}

export async function buildPvReport(context: ReportContext, query: ReportQuery): Promise<Block[]> {
  const { db } = context
  const window = reportDays(context, query, await latestQuarter(db, 'pv'), DEFAULT_REPORT_DAYS)
  const [summary, days, balance, weather, value] = await Promise.all([
    columnSummaries(db, 'pv', PV_COLUMNS, window.from, window.to, window.zone),
    dailyTotals(db, 'pv', PV_COLUMNS, window.from, window.to, window.zone),
    aulepBalance(db, window.from, window.to),
    columnSummaries(db, 'weather', ['global_solar_radiation'], window.from, window.to, window.zone),
    pricedDays(context.pool, pricedSeries('pv', 'tot_pv', 'energy'), window.from, window.to, window.zone),
  ])
  return pvReport({
    window,
    quarters: summary.quarters,
    summaries: summary.columns,
    days,
    balance,
    radiation: weather.columns.global_solar_radiation,
    value,
    lang: query.lang ?? 'it',
  })
}

/** A group column priced as an amount of `kind` (energy: kWh of electricity; volume: m³ of water), converted over the quarter hour. */
function pricedSeries(group: 'pv' | 'water', column: string, kind: 'energy' | 'volume') {
  return {
    table: `${group}_15m`,
    column,
    factor: conversionFactor(seriesNamed(group, column).kind.unit, KINDS[kind].unit, QUARTER_SECONDS),
    commodity: commodityOf(kind) as Commodity,
  }
}

const SCHEDULE_GROUPS = [...new Set(SCHEDULE_SERIES.map((s) => s.group))]

/**
 * The last complete local year holding data: the newest year the data reaches the end of (its
 * newest quarter hour is the year's last or later) that holds any row; else the year of the
 * newest data, partial; with no data, the current year.
 */
async function defaultYear(context: ReportContext, zone: string): Promise<number> {
  const latest = await latestQuarterOf(context.db, SCHEDULE_GROUPS)
  if (latest === undefined) return localParts(context.now, zone).year
  const complete = localParts(latest + QUARTER_MS, zone).year - 1
  const from = localMidnight(`${complete}-01-01`, zone)
  const to = localMidnight(`${complete + 1}-01-01`, zone)
  return (await holdsData(context.db, SCHEDULE_GROUPS, from, to)) ? complete : localParts(latest, zone).year
}

export async function buildPalinsestiReport(
  context: ReportContext,
  query: { year?: number | undefined; timezone?: string | undefined; lang?: Language },
): Promise<Block[]> {
  const { db } = context
  const lang = query.lang ?? 'it'
  const zone = resolveZone(query.timezone, context.zone)
  const year = query.year ?? (await defaultYear(context, zone))
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
  const series = SCHEDULE_SERIES.map((s) =>
    foldSchedule(cells[s.group], s.column, s.name[lang], seriesNamed(s.group, s.column).kind.unit),
  )
  return palinsestiReport({ year, zone, from, to, series, lang })
}
