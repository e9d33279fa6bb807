/**
 * Timestamps at the edge of the API: what a caller may type, and how instants are written
 * back (ISO 8601 with the offset of the requested zone).
 */

const INPUT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(?:(Z|z)|([+\- ])(\d{2}):?(\d{2}))?$/

/**
 * `YYYY-MM-DD hh:mm:ss` (UTC, the spec's form), also with `T`, fractional seconds, `Z` or an
 * offset (`+01:00`; a `+` that arrived unescaped as a space is read as `+`), or a date alone
 * (midnight UTC). Returns epoch milliseconds, or undefined when the text is not such a time.
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

const ZONE = /^(UTC|[A-Za-z]+(?:\/[A-Za-z0-9_+-]+)+)$/

/** An IANA zone name both Node and PostgreSQL know (`Europe/Rome`, `UTC`, `America/New_York`). */
export function isTimeZone(name: string): boolean {
  const known = zones.get(name)
  if (known !== undefined) return known
  let valid = ZONE.test(name)
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
const zones = new Map<string, boolean>()

const QUARTER_MS = 900_000
const DAY_MS = 86_400_000

function offsetSuffix(minutes: number): string {
  const abs = Math.abs(minutes)
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
}

const formatters = new Map<string, (ms: number) => string>()

/**
 * Writes instants as `2025-03-30T03:15:00+02:00` in one zone. Asking Intl for every row would
 * dominate a large export, so offsets are looked up per UTC day: when a day starts and ends with
 * the same offset it holds no transition (zones change at most once a day) and every instant in it
 * gets that offset; a transition day is resolved per quarter hour. Formatters are shared per zone.
 */
export function instantFormatter(zone: string): (ms: number) => string {
  const existing = formatters.get(zone)
  if (existing) return existing
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  })
  const offsetMinutesAt = (at: number): number => {
    const p: Record<string, number> = {}
    for (const part of parts.formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value)
    const wall = Date.UTC(p.year ?? 0, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0)
    return Math.round((wall - Math.floor(at / 1000) * 1000) / 60_000)
  }
  // per UTC day: one offset, or null when the day has a transition
  const days = new Map<number, [number, string] | null>()
  const quarters = new Map<number, [number, string]>()
  const entry = (minutes: number): [number, string] => [minutes * 60_000, offsetSuffix(minutes)]
  const offsetOf = (ms: number): [number, string] => {
    const day = Math.floor(ms / DAY_MS)
    let known = days.get(day)
    if (known === undefined) {
      const first = offsetMinutesAt(day * DAY_MS)
      const last = offsetMinutesAt((day + 1) * DAY_MS - 1000)
      known = first === last ? entry(first) : null
      if (days.size > 100_000) days.clear()
      days.set(day, known)
    }
    if (known) return known
    const quarter = Math.floor(ms / QUARTER_MS)
    let exact = quarters.get(quarter)
    if (exact === undefined) {
      exact = entry(offsetMinutesAt(quarter * QUARTER_MS))
      if (quarters.size > 100_000) quarters.clear()
      quarters.set(quarter, exact)
    }
    return exact
  }
  const format = (ms: number) => {
    const [offset, suffix] = offsetOf(ms)
    return new Date(ms + offset).toISOString().slice(0, 19) + suffix
  }
  if (formatters.size > 50) formatters.clear()
  formatters.set(zone, format)
  return format
}

/** The quarter hour at or before an instant. */
export function floorToQuarter(ms: number): number {
  return Math.floor(ms / QUARTER_MS) * QUARTER_MS
}
