/**
 * Where the buckets of an aggregation begin and end, in one place: the database is given these
 * edges and only sorts quarter hours between them, so no zone rule is computed twice. Half hours
 * and quarter hours are fixed UTC slots. A local hour is the run of quarter hours sharing a
 * wall-clock hour and an offset (the repeated hour when clocks go back is two buckets; where
 * clocks move by 30 minutes, as on Lord Howe Island, the hours beside the change are half hours). A local
 * day, week or month starts at the first instant of its first local date, whether that date's
 * midnight is skipped (Africa/Cairo), doubled (America/Havana) or ordinary.
 */
import { AGGREGATIONS, type Aggregation } from './aggregation.ts'
import { floorQuarter, HOUR_MS, localDate, localMidnight, QUARTER_MS, zoneOffsets } from './time.ts'

function sameLocalHour(offsets: (ms: number) => number, a: number, b: number): boolean {
  const offsetA = offsets(a)
  const offsetB = offsets(b)
  return (
    offsetA === offsetB && Math.floor((a + offsetA * 60_000) / HOUR_MS) === Math.floor((b + offsetB * 60_000) / HOUR_MS)
  )
}

/** Days from the Monday of a date's week (weeks start on Monday) to the date. */
const sinceMonday = (date: string): number => (new Date(`${date}T12:00:00Z`).getUTCDay() + 6) % 7

/** The start of the bucket holding instant `t`. */
export function bucketStart(aggregation: Aggregation, zone: string, t: number): number {
  const a = AGGREGATIONS[aggregation]
  if (a.kind === 'fixed' && a.minutes < 60) {
    const length = a.minutes * 60_000
    return Math.floor(t / length) * length
  }
  if (a.kind === 'fixed') {
    const offsets = zoneOffsets(zone)
    let start = floorQuarter(t)
    while (sameLocalHour(offsets, start - QUARTER_MS, start)) start -= QUARTER_MS
    return start
  }
  const date = localDate(t, zone)
  if (a.unit === 'day') return localMidnight(date, zone)
  if (a.unit === 'week') return localMidnight(date, zone, -sinceMonday(date))
  return localMidnight(`${date.slice(0, 7)}-01`, zone)
}

/** The start of the bucket after the one starting at `start`. */
export function nextBucket(aggregation: Aggregation, zone: string, start: number): number {
  const a = AGGREGATIONS[aggregation]
  if (a.kind === 'fixed' && a.minutes < 60) return start + a.minutes * 60_000
  if (a.kind === 'fixed') {
    const offsets = zoneOffsets(zone)
    let end = start + QUARTER_MS
    while (sameLocalHour(offsets, end, start)) end += QUARTER_MS
    return end
  }
  const date = localDate(start, zone)
  if (a.unit === 'day') return localMidnight(date, zone, 1)
  if (a.unit === 'week') return localMidnight(date, zone, 7)
  const [year, month] = date.split('-').map(Number) as [number, number]
  const next =
    month === 12
      ? `${String(year + 1).padStart(4, '0')}-01-01`
      : `${date.slice(0, 5)}${String(month + 1).padStart(2, '0')}-01`
  return localMidnight(next, zone)
}

/** The shortest bucket of each aggregation in any zone: a local hour may be half an hour where clocks move by 30 minutes. */
const SHORTEST_MS: Record<Aggregation, number> = {
  '15 m': QUARTER_MS,
  '30 m': 2 * QUARTER_MS,
  '1 h': 2 * QUARTER_MS,
  '1 d': 22 * HOUR_MS,
  '1 w': 7 * 24 * HOUR_MS - 2 * HOUR_MS,
  '1 mon': 28 * 24 * HOUR_MS - 2 * HOUR_MS,
}
/** Its ordinary length: a local hour is an hour outside the rare zones above. */
const ORDINARY_MS: Record<Aggregation, number> = { ...SHORTEST_MS, '1 h': HOUR_MS }

/**
 * How many buckets `[lo, hi)` holds, by arithmetic, before any edge is computed: `at most` is never
 * exceeded (the cap is checked against it before anything is allocated), `about` is what an
 * ordinary zone gives (what the refusal says).
 */
export function bucketCount(aggregation: Aggregation, lo: number, hi: number): { atMost: number; about: number } {
  const span = Math.max(0, hi - lo)
  return {
    atMost: Math.ceil(span / SHORTEST_MS[aggregation]) + 1,
    about: Math.ceil(span / ORDINARY_MS[aggregation]),
  }
}

/** Every bucket start from `lo` (a bucket start) before `hi` (one too), then `hi`. */
export function bucketEdges(aggregation: Aggregation, zone: string, lo: number, hi: number): number[] {
  const edges: number[] = []
  for (let edge = lo; edge < hi; ) {
    edges.push(edge)
    const next = nextBucket(aggregation, zone, edge)
    // a zone whose calendar does not advance would loop forever: no such zone exists, but say so
    if (!(next > edge)) throw new Error(`bucket after ${new Date(edge).toISOString()} in ${zone} does not advance`)
    edge = next
  }
  edges.push(hi)
  return edges
}
