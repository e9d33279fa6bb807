/**
 * Wall-clock time in a named zone (Europe/Rome by default), without a date library: the charts
 * and reports need local days (23, 24 or 25 hours long), local hours and ISO 8601 with offset.
 */

export const DEFAULT_ZONE = 'Europe/Rome'
export const QUARTER_MS = 15 * 60_000
export const DAY_MS = 24 * 3_600_000

export interface LocalParts {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
    formatters.set(zone, f)
  }
  return f
}

/** True when `zone` is an IANA time zone name the runtime knows. */
export function isKnownZone(zone: string): boolean {
  try {
    formatter(zone)
    return true
  } catch {
    return false
  }
}

/** The wall-clock fields of an instant in `zone`. */
export function localParts(instant: number, zone: string): LocalParts {
  const parts: Record<string, number> = {}
  for (const p of formatter(zone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value)
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour!,
    minute: parts.minute!,
    second: parts.second!,
  }
}

/** Offset of `zone` from UTC at an instant, in minutes (Europe/Rome: 60 in winter, 120 in summer). */
export function offsetMinutes(instant: number, zone: string): number {
  const p = localParts(instant, zone)
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000)
}

/**
 * The instant a wall-clock time in `zone` names. An ambiguous time (the repeated hour when
 * clocks go back) is its first occurrence; a time that does not exist (the skipped hour) is
 * read with the offset in force before the change.
 */
export function localToInstant(p: LocalParts, zone: string): number {
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
  const before = offsetMinutes(wall - DAY_MS / 2, zone)
  const after = offsetMinutes(wall + DAY_MS / 2, zone)
  // earlier occurrence first: try the offset in force before any change that day
  for (const offset of [Math.max(before, after), Math.min(before, after)]) {
    const candidate = wall - offset * 60_000
    if (offsetMinutes(candidate, zone) === offset) return candidate
  }
  return wall - before * 60_000
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** ISO 8601 with the zone's offset, to the second: `2025-10-26T02:15:00+01:00`. */
export function formatIso(instant: number, zone: string): string {
  const p = localParts(instant, zone)
  const offset = offsetMinutes(instant, zone)
  const sign = offset < 0 ? '-' : '+'
  const abs = Math.abs(offset)
  return (
    `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  )
}

/** `YYYY-MM-DD` of the local day holding an instant. */
export function localDate(instant: number, zone: string): string {
  const p = localParts(instant, zone)
  return `${p.year}-${pad(p.month)}-${pad(p.day)}`
}

/** Local midnight starting the day `YYYY-MM-DD` plus `days` calendar days. */
export function localMidnight(date: string, zone: string, days = 0): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number]
  const shifted = new Date(Date.UTC(year, month - 1, day + days))
  return localToInstant(
    {
      year: shifted.getUTCFullYear(),
      month: shifted.getUTCMonth() + 1,
      day: shifted.getUTCDate(),
      hour: 0,
      minute: 0,
      second: 0,
    },
    zone,
  )
}

/** Local calendar days from `first` to `last` inclusive, as `YYYY-MM-DD`. */
export function localDays(first: string, last: string): string[] {
  const days: string[] = []
  const [y, m, d] = first.split('-').map(Number) as [number, number, number]
  for (let i = 0; ; i++) {
    const date = new Date(Date.UTC(y, m - 1, d + i)).toISOString().slice(0, 10)
    if (date > last) return days
    days.push(date)
  }
}

/** The quarter-hour slot starting at or before an instant. */
export const floorQuarter = (instant: number): number => Math.floor(instant / QUARTER_MS) * QUARTER_MS
