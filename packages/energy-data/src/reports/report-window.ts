import { UnprocessableEntity } from '../errors.ts'
import { parseBound } from './datetime-input.ts'
import { DAY_MS, DEFAULT_ZONE, floorQuarter, isKnownZone, localDate, localMidnight, QUARTER_MS } from './zoned-time.ts'

/** Default report range: the 7 days (672 quarter hours) ending with the newest data. */
export const DEFAULT_REPORT_DAYS = 7
/** Longest range one report covers: a leap year and a day. */
export const MAX_REPORT_DAYS = 367

export interface ReportWindowQuery {
  start_datetime?: string
  end_datetime?: string
  timezone?: string
}

export interface ReportWindow {
  /** First instant included. */
  from: number
  /** Last instant included. */
  to: number
  zone: string
}

const invalid = (field: string, msg: string, type: string) =>
  new UnprocessableEntity([{ loc: ['query', field], msg, type }])

export function resolveZone(zone: string | undefined): string {
  const name = zone ?? DEFAULT_ZONE
  if (!isKnownZone(name)) throw invalid('timezone', `Unknown time zone '${name}'`, 'value_error')
  return name
}

/**
 * The inclusive range a report covers. A bound without an offset is wall-clock time in the
 * zone; an end given as a date alone covers that whole local day. Missing end: the newest data
 * (or now); missing start: 7 days before the end.
 */
export function resolveReportWindow(
  query: ReportWindowQuery,
  latest: number | undefined,
  now: number = Date.now(),
): ReportWindow {
  const zone = resolveZone(query.timezone)
  let to = latest ?? floorQuarter(now)
  if (query.end_datetime !== undefined) {
    const end = parseBound(query.end_datetime, zone)
    if (!end) throw invalid('end_datetime', 'Input should be a valid datetime', 'datetime_parsing')
    to = end.dateOnly ? localMidnight(localDate(end.instant, zone), zone, 1) - 1 : end.instant
  }
  let from = to - DEFAULT_REPORT_DAYS * DAY_MS + QUARTER_MS
  if (query.start_datetime !== undefined) {
    const start = parseBound(query.start_datetime, zone)
    if (!start) throw invalid('start_datetime', 'Input should be a valid datetime', 'datetime_parsing')
    from = start.instant
  }
  if (from > to) throw invalid('end_datetime', 'end_datetime must not be before start_datetime', 'value_error')
  if (to - from > MAX_REPORT_DAYS * DAY_MS) {
    throw invalid(
      'end_datetime',
      `The range exceeds ${MAX_REPORT_DAYS} days: narrow start_datetime/end_datetime or ask one report per year`,
      'value_error',
    )
  }
  return { from, to, zone }
}
