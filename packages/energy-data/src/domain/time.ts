/**
 * Time in the energy service, in one place: the one reading of what a caller types (UTC unless
 * it carries an offset, on every endpoint and in every command: export, seed, rollups:refresh,
 * key expiry, CSV import; answers print times in the request's zone with its offset), the one zone check, local days (23, 24 or 25 hours
 * long) and hours of a named zone, and ISO 8601 output with the zone's offset.
 */

export const QUARTER_MS = 900_000
export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000

const INPUT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(?:(Z|z)|([+\- ])(\d{2}):?(\d{2}))?$/

export const DATETIME_MESSAGE =
  'Input should be a valid datetime (YYYY-MM-DD hh:mm:ss in UTC, or ISO 8601 with an offset)'

/**
 * `YYYY-MM-DD hh:mm:ss` (UTC, the contract's form), also with `T`, without seconds, with
 * fractional seconds, `Z` or an offset (`+01:00`, `+0100`; a `+` that arrived unescaped as a space
 * is read as `+`), or a date alone (midnight UTC). Returns epoch milliseconds, or undefined when
 * the text is not a real calendar time.
 */
export function parseInstant(text: string): number | undefined {
  const m = INPUT.exec(text.trim())
  if (!m) return undefined
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', , sign, oh, om] = m
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  const hour = Number(h)
  const minute = Number(mi)
  const second = Number(s)
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined
  const date = new Date(0)
  // setUTCFullYear, unlike Date.UTC, does not read years below 100 as 19xx
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, Number(frac.slice(0, 3).padEnd(3, '0')))
  const local = date.getTime()
  if (date.getUTCDate() !== day) return undefined // 2025-02-30
  if (sign === undefined) return local
  const offsetHours = Number(oh)
  const offsetMinutes = Number(om)
  if (offsetHours > 23 || offsetMinutes > 59) return undefined
  const offset = (offsetHours * 60 + offsetMinutes) * 60_000
  return sign === '-' ? local + offset : local - offset
}

const zones = new Map<string, boolean>()
/** The zones the database knows, lower-cased (PostgreSQL reads zone names in any case). */
let databaseZones: Set<string> | undefined

/**
 * The database's zone names (`pg_timezone_names`): from now on a zone is accepted only when the
 * database knows it as well as Node, so an accepted zone never fails in a query later. Given a
 * second list (another database in the same process), only the zones both know stay.
 */
export function registerDatabaseZones(names: Iterable<string>): void {
  const lowered = new Set([...names].map((n) => n.toLowerCase()))
  databaseZones = databaseZones ? new Set([...databaseZones].filter((n) => lowered.has(n))) : lowered
  zones.clear()
}

/** Whether the database zones are known yet (they are read once per process). */
export const databaseZonesRegistered = (): boolean => databaseZones !== undefined

/**
 * A time zone name both Node and the database know (`Europe/Rome`, `UTC`, `GMT`, `EST5EDT`): the
 * one rule for every `timezone` the API takes. Offsets such as `+01:00` are not names.
 */
export function isTimeZone(name: string): boolean {
  const known = zones.get(name)
  if (known !== undefined) return known
  let valid = /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name) && (databaseZones?.has(name.toLowerCase()) ?? true)
  if (valid) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: name })
    } catch {
      valid = false
    }
  }
  if (zones.size > 1000) zones.clear()
  zones.set(name, valid)
  return valid
}

export const ZONE_MESSAGE = 'Input should be an IANA time zone name such as Europe/Rome'

interface LocalParts {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
}

const dateFormats = new Map<string, Intl.DateTimeFormat>()

/** The Intl formatter of a locale and options, built once: building one costs far more than using it. */
export function dateFormat(locale: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale}|${JSON.stringify(options)}`
  let format = dateFormats.get(key)
  if (!format) {
    if (dateFormats.size > 200) dateFormats.clear()
    format = new Intl.DateTimeFormat(locale, options)
    dateFormats.set(key, format)
  }
  return format
}

/** The wall-clock fields of an instant in `zone`. */
export function localParts(instant: number, zone: string): LocalParts {
  const p: Record<string, number> = {}
  const parts = dateFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(instant)
  for (const part of parts) if (part.type !== 'literal') p[part.type] = Number(part.value)
  return { year: p.year!, month: p.month!, day: p.day!, hour: p.hour!, minute: p.minute!, second: p.second! }
}

/** Offset of `zone` from UTC at an instant, in minutes (Europe/Rome: 60 in winter, 120 in summer). */
export function offsetMinutes(instant: number, zone: string): number {
  const p = localParts(instant, zone)
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
  return Math.round((wall - Math.floor(instant / 1000) * 1000) / 60_000)
}

/**
 * The instant a wall-clock time in `zone` names. An ambiguous time (the repeated hour when
 * clocks go back) is its first occurrence; a time that does not exist (the skipped hour) is
 * read with the offset in force before the change.
 */
export function localToInstant(p: LocalParts, zone: string): number {
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
  const offsetAt = zoneOffsets(zone)
  const before = offsetAt(wall - DAY_MS / 2)
  const after = offsetAt(wall + DAY_MS / 2)
  // earlier occurrence first: try the offset in force before any change that day
  for (const offset of [Math.max(before, after), Math.min(before, after)]) {
    const candidate = wall - offset * 60_000
    if (offsetAt(candidate) === offset) return candidate
  }
  return wall - before * 60_000
}

const pad = (n: number) => String(n).padStart(2, '0')

/** `YYYY-MM-DD` of the local day holding an instant. */
export function localDate(instant: number, zone: string): string {
  const wall = new Date(instant + zoneOffsets(zone)(instant) * 60_000)
  return `${String(wall.getUTCFullYear()).padStart(4, '0')}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}`
}

/** Local midnight starting the day `YYYY-MM-DD` plus `days` calendar days. */
export function localMidnight(date: string, zone: string, days = 0): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number]
  const shifted = new Date(0)
  shifted.setUTCFullYear(year, month - 1, day + days)
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

/** The quarter hour at or before an instant. */
export const floorQuarter = (instant: number): number => Math.floor(instant / QUARTER_MS) * QUARTER_MS

function offsetSuffix(minutes: number): string {
  const abs = Math.abs(minutes)
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
}

const lookups = new Map<string, (ms: number) => number>()

/**
 * The offset of `zone` at any instant, in minutes, fast: asking Intl for every row would dominate a
 * large export, so offsets are looked up per UTC day: when a day starts and ends with the same
 * offset it holds no transition (zones change at most once a day) and every instant in it gets
 * that offset; a transition day is resolved per quarter hour (transitions fall on quarter hours).
 * Shared per zone.
 */
export function zoneOffsets(zone: string): (ms: number) => number {
  const existing = lookups.get(zone)
  if (existing) return existing
  // per UTC day: one offset, or null when the day has a transition
  const days = new Map<number, number | null>()
  const quarters = new Map<number, number>()
  const lookup = (ms: number) => {
    const day = Math.floor(ms / DAY_MS)
    let known = days.get(day)
    if (known === undefined) {
      const first = offsetMinutes(day * DAY_MS, zone)
      const last = offsetMinutes((day + 1) * DAY_MS - 1000, zone)
      known = first === last ? first : null
      if (days.size > 100_000) days.clear()
      days.set(day, known)
    }
    if (known !== null) return known
    const quarter = Math.floor(ms / QUARTER_MS)
    let exact = quarters.get(quarter)
    if (exact === undefined) {
      exact = offsetMinutes(quarter * QUARTER_MS, zone)
      if (quarters.size > 100_000) quarters.clear()
      quarters.set(quarter, exact)
    }
    return exact
  }
  if (lookups.size > 50) lookups.clear()
  lookups.set(zone, lookup)
  return lookup
}

const formatters = new Map<string, (ms: number) => string>()

/** Writes instants as `2025-03-30T03:15:00+02:00` in one zone, each with the offset in force then. */
export function instantFormatter(zone: string): (ms: number) => string {
  const existing = formatters.get(zone)
  if (existing) return existing
  const offsetOf = zoneOffsets(zone)
  const suffixes = new Map<number, string>()
  const format = (ms: number) => {
    const minutes = offsetOf(ms)
    let suffix = suffixes.get(minutes)
    if (suffix === undefined) {
      suffix = offsetSuffix(minutes)
      suffixes.set(minutes, suffix)
    }
    return new Date(ms + minutes * 60_000).toISOString().slice(0, 19) + suffix
  }
  if (formatters.size > 50) formatters.clear()
  formatters.set(zone, format)
  return format
}

/** ISO 8601 with the zone's offset, to the second: `2025-10-26T02:15:00+01:00`. */
export const formatIso = (instant: number, zone: string): string => instantFormatter(zone)(instant)

/** Quarter hours in `[from, to)`: 92, 96 or 100 in a local day of Europe/Rome. */
export const quartersBetween = (from: number, to: number): number => Math.max(Math.round((to - from) / QUARTER_MS), 0)
