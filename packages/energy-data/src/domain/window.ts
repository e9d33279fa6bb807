/**
 * The windows of time a request covers: the one resolver of `start_datetime`/`end_datetime`
 * (every endpoint, one error style), the defaults of the data endpoints, whole local days for
 * reports, and the fixed windows of the charts.
 */
import type { ValidationIssue } from '@campus/shared'
import { UnprocessableEntity } from '../errors.ts'
import { AGGREGATIONS, type Aggregation } from './aggregation.ts'
import {
  DATETIME_MESSAGE,
  DAY_MS,
  floorQuarter,
  isTimeZone,
  localDate,
  localMidnight,
  parseInstant,
  QUARTER_MS,
  ZONE_MESSAGE,
} from './time.ts'

export interface WindowQuery {
  start_datetime?: string | undefined
  end_datetime?: string | undefined
  timezone?: string | undefined
}

/** Both ends inclusive, epoch ms, and the zone of local days and printed times. */
interface Window {
  startMs: number
  endMs: number
  zone: string
}

/** What a request without one or both bounds covers, given the bounds it has. */
type WindowDefaults = (start: number | undefined, end: number | undefined) => { startMs: number; endMs: number }

const LIMIT_MS = Date.UTC(9999, 0, 1)

/**
 * Reads both bounds (UTC unless they carry an offset), checks `timezone` (default `zone`, the
 * service's) and fills what is missing from `defaults`. Every problem of the input answers one
 * 422 listing them all, in FastAPI's shape. Callers align the result to their buckets: the data
 * endpoints to their aggregation, reports to whole local days.
 */
export function resolveWindow(
  query: WindowQuery,
  options: { zone: string; defaults: WindowDefaults; issues?: ValidationIssue[] },
): Window {
  const issues = [...(options.issues ?? [])]
  const zone = query.timezone ?? options.zone
  if (!isTimeZone(zone)) issues.push(ZONE_ISSUE)
  const start = query.start_datetime === undefined ? undefined : parseInstant(query.start_datetime)
  const end = query.end_datetime === undefined ? undefined : parseInstant(query.end_datetime)
  if (query.start_datetime !== undefined && start === undefined) {
    issues.push({ loc: ['query', 'start_datetime'], msg: DATETIME_MESSAGE, type: 'datetime_parsing' })
  }
  if (query.end_datetime !== undefined && end === undefined) {
    issues.push({ loc: ['query', 'end_datetime'], msg: DATETIME_MESSAGE, type: 'datetime_parsing' })
  }
  if (issues.length) throw new UnprocessableEntity(issues)
  const { startMs, endMs } = options.defaults(start, end)
  if (startMs > endMs) {
    // blame the bound that was sent: a start alone, after the default end, is the start's fault
    throw end === undefined
      ? invalid('start_datetime', 'start_datetime is after the default end_datetime: send end_datetime too')
      : invalid('end_datetime', 'end_datetime must not be before start_datetime')
  }
  if (Math.abs(startMs) > LIMIT_MS || Math.abs(endMs) > LIMIT_MS) {
    throw invalid('start_datetime', 'Datetime out of range')
  }
  return { startMs, endMs, zone }
}

const ZONE_ISSUE: ValidationIssue = { loc: ['query', 'timezone'], msg: ZONE_MESSAGE, type: 'value_error' }

/** The zone a request asks for (`timezone`), else the service's; 422 when it is not an IANA name. */
export function resolveZone(timezone: string | undefined, zone: string): string {
  const name = timezone ?? zone
  if (!isTimeZone(name)) throw new UnprocessableEntity([ZONE_ISSUE])
  return name
}

export const invalid = (field: string, msg: string) =>
  new UnprocessableEntity([{ loc: ['query', field], msg, type: 'value_error' }])

/** How far back the default data window reaches: a useful screenful of buckets for each aggregation. */
function defaultSpanMs(aggregation: Aggregation): number {
  const a = AGGREGATIONS[aggregation]
  if (a.kind === 'fixed') return DAY_MS
  if (a.unit === 'day') return 30 * DAY_MS
  if (a.unit === 'week') return 12 * 7 * DAY_MS
  return 365 * DAY_MS
}

/** Data endpoints: up to the current quarter hour, `defaultSpanMs` long; given a start alone, that span after it. */
export function dataDefaults(aggregation: Aggregation, nowMs: number): WindowDefaults {
  const span = defaultSpanMs(aggregation)
  return (start, end) => {
    const endMs = end ?? (start !== undefined ? start + span : floorQuarter(nowMs))
    return { startMs: start ?? endMs - span, endMs }
  }
}

/** Whole local days, oldest first, with the instants that bound them. */
export interface DayWindow {
  /** Local days `YYYY-MM-DD`. */
  days: string[]
  /** Local midnight starting the first day. */
  from: number
  /** Local midnight ending the last day (exclusive). */
  to: number
  zone: string
}

/** The local days holding the two ends of a window, and every day between. */
export function wholeDays(window: Window): DayWindow {
  const { zone } = window
  const first = localDate(window.startMs, zone)
  const last = localDate(window.endMs, zone)
  const days: string[] = []
  for (let k = 0; ; k++) {
    const day = localDate(localMidnight(first, zone, k), zone)
    if (day > last) break
    days.push(day)
  }
  return { days, from: localMidnight(first, zone), to: localMidnight(last, zone, 1), zone }
}

/**
 * The newest complete local day holding data: the day of the newest quarter hour when that
 * quarter ends it, else the day before. With no data at all, yesterday.
 */
function lastCompleteDay(latest: number | undefined, now: number, zone: string): string {
  const newest = latest ?? floorQuarter(now) - QUARTER_MS
  const day = localDate(newest, zone)
  const complete = newest + QUARTER_MS >= localMidnight(day, zone, 1)
  return complete ? day : localDate(localMidnight(day, zone, -1), zone)
}

/** Reports: the `count` complete local days ending with the newest complete day holding data. */
export function lastDaysDefaults(count: number, latest: number | undefined, now: number, zone: string): WindowDefaults {
  return (start, end) => {
    const lastDay = lastCompleteDay(latest, now, zone)
    const endMs = end ?? localMidnight(lastDay, zone, 1) - QUARTER_MS
    const startMs = start ?? localMidnight(localDate(endMs, zone), zone, 1 - count)
    return { startMs, endMs }
  }
}

/** Charts: the 7 x 96 quarter hours `(anchor - 7 days, anchor]`, oldest first, whatever the DST changes in them. */
export function quarterSlots(anchor: number, days = 7): number[] {
  const last = floorQuarter(anchor)
  const count = (days * DAY_MS) / QUARTER_MS
  return Array.from({ length: count }, (_, i) => last - (count - 1 - i) * QUARTER_MS)
}

/** Charts: the last `count` complete local days holding data (a day still in progress is left out). */
export function completeDays(latest: number | undefined, now: number, zone: string, count: number): DayWindow {
  const last = lastCompleteDay(latest, now, zone)
  return wholeDays({ startMs: localMidnight(last, zone, 1 - count), endMs: localMidnight(last, zone), zone })
}
