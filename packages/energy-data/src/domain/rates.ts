/**
 * Tariffs and emission factors in force, in one place: which version prices (weighs) a quarter
 * hour, and the rule an import must keep to be taken. A tariff is a set of bands, each in force
 * from a local date to another (`[valid_from, valid_to)`), on some days of the week, from a local
 * time to another (`[from, to)`, 24:00 the end of the day), all of the zone the version was
 * imported in; an emission factor is such a band of every day and hour, or an hourly series of
 * instants. A quarter hour belongs to the band holding its local date, weekday and wall-clock
 * time (so a DST day needs no rule of its own: the repeated hour is priced twice by the band of
 * its wall-clock time, the skipped hour does not exist). The newest version whose span holds a
 * quarter hour prices it: an import changes nothing outside its span, a correction is a new
 * import. Pure: the versions are read by `repositories/rates.ts`.
 */
import type { Commodity } from '../catalogue/quantities.ts'
import { DAY_MS, HOUR_MS, QUARTER_MS, zoneOffsets } from './time.ts'

export const DAY_SETS = ['mon-fri', 'sat', 'sun', 'all'] as const
export type DaySet = (typeof DAY_SETS)[number]

/** The weekdays of a day set, 0 Sunday to 6 Saturday (`Date.getUTCDay`). */
const WEEKDAYS: Record<DaySet, readonly number[]> = {
  'mon-fri': [1, 2, 3, 4, 5],
  sat: [6],
  sun: [0],
  all: [0, 1, 2, 3, 4, 5, 6],
}

export const MINUTES_PER_DAY = 1440

export interface Band {
  commodity: Commodity
  /** Local dates `YYYY-MM-DD`, `[validFrom, validTo)`. */
  validFrom: string
  validTo: string
  days: DaySet
  /** Minutes of the local day, `[fromMinute, toMinute)`; 1440 is 24:00. */
  fromMinute: number
  toMinute: number
  value: number
}

export interface HourlyValue {
  commodity: Commodity
  /** Epoch ms; the value holds for one hour from it. */
  start: number
  value: number
}

export interface RateVersion {
  id: number
  zone: string
  bands: readonly Band[]
  /** In time order per commodity. */
  hours: readonly HourlyValue[]
}

/** A value in force over consecutive pieces of time: piece i is `[edges[i], edges[i + 1])`. */
export interface Timeline {
  edges: number[]
  values: Array<number | null>
  versions: Array<number | null>
}

/** Days since 1970-01-01 of a date `YYYY-MM-DD`. */
export const dayNumber = (date: string): number => Date.parse(`${date}T00:00:00Z`) / DAY_MS

/** `YYYY-MM-DD` of a day number. */
export const dayDate = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10)

interface ResolvedBand {
  from: number
  to: number
  weekdays: ReadonlySet<number>
  fromMinute: number
  toMinute: number
  value: number
}

/** What one version says of one commodity, ready to be asked per quarter hour. */
interface VersionLookup {
  id: number
  /** Instants outside which the version is silent (its span, a day wider for any zone's offset). */
  from: number
  to: number
  /** The value and version at quarter hour `t`, or undefined where the version is silent. */
  at(t: number): number | undefined
}

function lookupOf(version: RateVersion, commodity: Commodity): VersionLookup | undefined {
  const bands: ResolvedBand[] = version.bands
    .filter((b) => b.commodity === commodity)
    .map((b) => ({
      from: dayNumber(b.validFrom),
      to: dayNumber(b.validTo),
      weekdays: new Set(WEEKDAYS[b.days]),
      fromMinute: b.fromMinute,
      toMinute: b.toMinute,
      value: b.value,
    }))
  const hours = version.hours.filter((h) => h.commodity === commodity)
  if (bands.length === 0 && hours.length === 0) return undefined
  const offsets = zoneOffsets(version.zone)
  const days = bands.flatMap((b) => [b.from, b.to])
  const starts = hours.map((h) => h.start)
  return {
    id: version.id,
    from: Math.min(...days.map((d) => (d - 1) * DAY_MS), ...starts),
    to: Math.max(...days.map((d) => (d + 1) * DAY_MS), ...starts.map((s) => s + HOUR_MS)),
    at(t) {
      if (bands.length > 0) {
        const wall = t + offsets(t) * 60_000
        const day = Math.floor(wall / DAY_MS)
        const minute = (wall - day * DAY_MS) / 60_000
        const weekday = (day + 4) % 7 // 1970-01-01 was a Thursday
        for (const b of bands) {
          if (day >= b.from && day < b.to && b.weekdays.has(weekday) && minute >= b.fromMinute && minute < b.toMinute)
            return b.value
        }
        return undefined
      }
      // the last hour starting at or before t, if t lies within it
      let lo = 0
      let hi = hours.length - 1
      if (hi < 0 || (hours[0] as HourlyValue).start > t) return undefined
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1
        if ((hours[mid] as HourlyValue).start <= t) lo = mid
        else hi = mid - 1
      }
      const hour = hours[lo] as HourlyValue
      return t < hour.start + HOUR_MS ? hour.value : undefined
    },
  }
}

/**
 * The values in force for `commodity` over `[lo, hi)` (quarter-hour instants), newest version
 * first: piece by piece, each run of quarter hours priced alike (same value, same version) one
 * piece, a run that no version prices a piece of null.
 */
export function timelineOf(versions: readonly RateVersion[], commodity: Commodity, lo: number, hi: number): Timeline {
  const lookups = [...versions]
    .sort((a, b) => b.id - a.id)
    .map((v) => lookupOf(v, commodity))
    .filter((l): l is VersionLookup => l !== undefined)
  const timeline: Timeline = { edges: [lo], values: [null], versions: [null] }
  let lastValue: number | null | undefined = null
  let lastVersion: number | null | undefined = null
  // only the quarter hours some version may price are walked: a window of centuries costs the span imported
  const first = Math.max(lo, Math.floor(Math.min(...lookups.map((l) => l.from)) / QUARTER_MS) * QUARTER_MS)
  const last = Math.min(hi, Math.max(...lookups.map((l) => l.to)))
  for (let t = first; t < last; t += QUARTER_MS) {
    let value: number | null = null
    let version: number | null = null
    for (const lookup of lookups) {
      const found = lookup.at(t)
      if (found !== undefined) {
        value = found
        version = lookup.id
        break
      }
    }
    if (value !== lastValue || version !== lastVersion) {
      if (t === lo) {
        timeline.values[0] = value
        timeline.versions[0] = version
      } else {
        timeline.edges.push(t)
        timeline.values.push(value)
        timeline.versions.push(version)
      }
      lastValue = value
      lastVersion = version
    }
  }
  if (lastValue !== null && last < hi) {
    timeline.edges.push(last)
    timeline.values.push(null)
    timeline.versions.push(null)
  }
  timeline.edges.push(hi)
  return timeline
}

/** The part of a timeline within `[lo, hi)` (both within it), as a timeline of its own. */
export function timelineWithin(timeline: Timeline, lo: number, hi: number): Timeline {
  const { edges } = timeline
  let first = 0
  while (first + 1 < edges.length - 1 && (edges[first + 1] as number) <= lo) first++
  let last = first
  while (last + 1 < edges.length - 1 && (edges[last + 1] as number) < hi) last++
  return {
    edges: [lo, ...edges.slice(first + 1, last + 1), hi],
    values: timeline.values.slice(first, last + 1),
    versions: timeline.versions.slice(first, last + 1),
  }
}

/** A band as a reader meets it in the file: its line, for the refusals that name it. */
export interface BandLine extends Band {
  line: number
}

const clock = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']

/**
 * Why a set of bands is not one tariff: per commodity, from its first date to its last, every
 * quarter hour of every day must lie in exactly one band. Each problem names its lines.
 */
export function bandProblems(bands: readonly BandLine[]): string[] {
  // a problem met on several weekdays is said once, naming them: `mon, tue 07:00-08:00`
  const problems = new Map<string, { days: string[]; say: (days: string) => string }>()
  const add = (key: string, day: string, say: (days: string) => string) => {
    const found = problems.get(key)
    if (found) found.days.push(day)
    else problems.set(key, { days: [day], say })
  }
  const commodities = [...new Set(bands.map((b) => b.commodity))]
  for (const commodity of commodities) {
    const own = bands.filter((b) => b.commodity === commodity)
    // the dates where the set of bands in force changes cut the span into runs of days
    const cuts = [...new Set(own.flatMap((b) => [dayNumber(b.validFrom), dayNumber(b.validTo)]))].sort((a, b) => a - b)
    for (let i = 0; i + 1 < cuts.length; i++) {
      const from = cuts[i] as number
      const to = cuts[i + 1] as number
      const when = `from ${dayDate(from)} to ${dayDate(to)}`
      const active = own.filter((b) => dayNumber(b.validFrom) <= from && dayNumber(b.validTo) >= to)
      if (active.length === 0) {
        add(
          `${commodity} ${when}`,
          '',
          () => `${commodity}: no band ${when} (a gap in the validity of lines ${lineList(own)})`,
        )
        continue
      }
      for (let weekday = 0; weekday < 7; weekday++) {
        const slots: BandLine[][] = Array.from({ length: MINUTES_PER_DAY / 15 }, () => [])
        const ofDay = active.filter((b) => WEEKDAYS[b.days].includes(weekday))
        for (const b of ofDay) for (let m = b.fromMinute; m < b.toMinute; m += 15) slots[m / 15]?.push(b)
        reportRuns(slots, (holders, fromSlot, toSlot) => {
          const span = (days: string) => `${days} ${clock(fromSlot * 15)}-${clock(toSlot * 15)} ${when}`
          const day = DAY_NAMES[weekday] as string
          if (holders.length > 1) {
            add(
              `${commodity} ${lineList(holders)} ${span('')}`,
              day,
              (days) => `${commodity}: lines ${lineList(holders)} overlap on ${span(days)}`,
            )
          } else {
            const of = ofDay.length ? ` (the bands of those days: lines ${lineList(ofDay)})` : ''
            add(`${commodity} none ${span('')}${of}`, day, (days) => `${commodity}: no band covers ${span(days)}${of}`)
          }
        })
      }
    }
  }
  return [...problems.values()].slice(0, 20).map((p) => p.say(p.days.join(', ')))
}

const lineList = (bands: readonly { line: number }[]) => [...new Set(bands.map((b) => b.line))].join(', ')

/** Calls `report` for each run of slots held by the same bands where that is not exactly one. */
function reportRuns(
  slots: BandLine[][],
  report: (holders: BandLine[], fromSlot: number, toSlot: number) => void,
): void {
  let start = 0
  const key = (s: BandLine[]) => s.map((b) => b.line).join(',')
  for (let i = 1; i <= slots.length; i++) {
    if (i < slots.length && key(slots[i] as BandLine[]) === key(slots[start] as BandLine[])) continue
    const holders = slots[start] as BandLine[]
    if (holders.length !== 1) report(holders, start, i)
    start = i
  }
}
