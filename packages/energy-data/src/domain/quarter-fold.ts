/**
 * The statistics of a quarter hour kept incrementally (docs/LIVE.md, "Quarter hours"): a new
 * sample changes its quarter hour by what it brings - count + 1, sum + v, min and max compared, the
 * mean sum / count, the tag worsened where the sample says so - so that taking a sample never
 * reads the quarter's other samples. Pure; the write path (repositories/sample-writes.ts) reads the
 * rows before and writes them after.
 */
import { TAGS } from './tags.ts'

/** A `data_15m` row's statistics. */
export interface QuarterStats {
  avg: number | null
  min: number | null
  max: number | null
  sum: number | null
  count: number | null
  tag: string
}

/** What new samples bring to one quarter hour (for an amount meter, its increments). */
export interface Contribution {
  count: number
  sum: number
  min: number
  max: number
  /** A sample outside its kind's plausible range. */
  suspect: boolean
  /** An energy or volume register restarted. */
  restarted: boolean
}

export const emptyContribution = (): Contribution => ({
  count: 0,
  sum: 0,
  min: Number.POSITIVE_INFINITY,
  max: Number.NEGATIVE_INFINITY,
  suspect: false,
  restarted: false,
})

/** Adds one sample (an increment) to a contribution. */
export function addSample(
  c: Contribution,
  value: number,
  plausible: { min: number; max: number } | undefined,
  restarted: boolean,
): void {
  c.count += 1
  c.sum += value
  if (value < c.min) c.min = value
  if (value > c.max) c.max = value
  if (plausible && (value < plausible.min || value > plausible.max)) c.suspect = true
  if (restarted) c.restarted = true
}

const rank = (tag: string) => TAGS.indexOf(tag as (typeof TAGS)[number])

/** The worse of two tags (ok < estimated < interpolated < suspect < invalid). */
export const worseTag = (a: string, b: string): string => (rank(b) > rank(a) ? b : a)

/** A stored quarter hour: its statistics, and whether they are those of its samples (`data_15m.live`). */
export interface StoredQuarter extends QuarterStats {
  live: boolean | null
}

/** Whether a row holds the statistics of its samples, so that more samples extend it (else they fold it again). */
export const extendable = (row: StoredQuarter): boolean =>
  row.live === true && row.count !== null && row.count > 0 && row.sum !== null && row.min !== null && row.max !== null

/** The quarter hour after new samples: `old` (an extendable row, or none) and what they bring. */
export function mergeQuarter(old: QuarterStats | undefined, c: Contribution): QuarterStats {
  const tag = c.suspect ? 'suspect' : c.restarted ? 'estimated' : 'ok'
  if (!old) return { avg: c.sum / c.count, min: c.min, max: c.max, sum: c.sum, count: c.count, tag }
  const count = (old.count as number) + c.count
  const sum = (old.sum as number) + c.sum
  return {
    avg: sum / count,
    min: Math.min(old.min as number, c.min),
    max: Math.max(old.max as number, c.max),
    sum,
    count,
    tag: worseTag(old.tag, tag),
  }
}

/** A register reading and the increment it gives (none for the first reading of a register). */
export interface RegisterStep {
  timeUs: number
  increment: number | null
  restarted: boolean
}

/**
 * The increments of a meter's register readings, in time order, following the register's reading
 * before them (`previous`, or none): the reading minus the one before; a reading lower than the one
 * before means the register restarted, and the reading itself is the increment.
 */
export function registerSteps(
  readings: ReadonlyArray<{ timeUs: number; value: number }>,
  previous: number | undefined,
): RegisterStep[] {
  const steps: RegisterStep[] = []
  let before = previous
  for (const r of readings) {
    if (before === undefined) steps.push({ timeUs: r.timeUs, increment: null, restarted: false })
    else if (r.value >= before) steps.push({ timeUs: r.timeUs, increment: r.value - before, restarted: false })
    else steps.push({ timeUs: r.timeUs, increment: r.value, restarted: true })
    before = r.value
  }
  return steps
}
