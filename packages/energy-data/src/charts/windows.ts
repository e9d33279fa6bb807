import { floorQuarter, localDate, localMidnight, QUARTER_MS } from '../reports/zoned-time.ts'

/**
 * The fixed chart windows. They end at the newest data present (so a chart is never empty
 * because the feed is a few minutes late; an empty table falls back to now).
 */

export const SERIES_DAYS = 7
export const DAILY_DAYS = 30

/** Quarter hours `(anchor - 7 days, anchor]`: 672 slots, oldest first, whatever the DST changes in it. */
export function quarterSlots(anchor: number, days = SERIES_DAYS): number[] {
  const last = floorQuarter(anchor)
  const count = (days * 24 * 3_600_000) / QUARTER_MS
  return Array.from({ length: count }, (_, i) => last - (count - 1 - i) * QUARTER_MS)
}

export interface DayWindow {
  /** Local days `YYYY-MM-DD`, oldest first. */
  days: string[]
  /** Local midnight starting the first day. */
  from: number
  /** Local midnight ending the last day (exclusive). */
  to: number
}

/**
 * The last `count` complete local days up to the quarter hour `anchor` (a day still in progress
 * is left out rather than drawn as a short bar).
 */
export function completeDays(anchor: number, zone: string, count = DAILY_DAYS): DayWindow {
  const end = localDate(floorQuarter(anchor) + QUARTER_MS, zone)
  const to = localMidnight(end, zone)
  const from = localMidnight(end, zone, -count)
  const days = Array.from({ length: count }, (_, i) => localDate(localMidnight(end, zone, i - count), zone))
  return { days, from, to }
}
