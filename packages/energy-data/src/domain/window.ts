import type { ValidationIssue } from '@campus/shared'
import { AGGREGATIONS, type Aggregation } from './aggregation.ts'
import { floorToQuarter, parseInstant } from './time.ts'

const DAY_MS = 86_400_000

/** How far back the default window reaches: a useful screenful of buckets for each aggregation. */
export function defaultSpanMs(aggregation: Aggregation): number {
  const a = AGGREGATIONS[aggregation]
  if (a.kind === 'fixed') return DAY_MS
  if (a.unit === 'day') return 30 * DAY_MS
  if (a.unit === 'week') return 12 * 7 * DAY_MS
  return 365 * DAY_MS
}

export const DATETIME_MESSAGE =
  'Input should be a valid datetime (YYYY-MM-DD hh:mm:ss in UTC, or ISO 8601 with an offset)'

/**
 * The requested window in epoch ms, both ends inclusive, or the issues with the input.
 * Missing ends default around "now" (see `defaultSpanMs`).
 */
export function resolveWindow(input: {
  start?: string | undefined
  end?: string | undefined
  aggregation: Aggregation
  nowMs: number
}): { startMs: number; endMs: number } | { issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = []
  const start = input.start === undefined ? undefined : parseInstant(input.start)
  const end = input.end === undefined ? undefined : parseInstant(input.end)
  if (input.start !== undefined && start === undefined) {
    issues.push({ loc: ['query', 'start_datetime'], msg: DATETIME_MESSAGE, type: 'datetime_parsing' })
  }
  if (input.end !== undefined && end === undefined) {
    issues.push({ loc: ['query', 'end_datetime'], msg: DATETIME_MESSAGE, type: 'datetime_parsing' })
  }
  if (issues.length) return { issues }
  const span = defaultSpanMs(input.aggregation)
  const endMs = end ?? (start !== undefined ? start + span : floorToQuarter(input.nowMs))
  const startMs = start ?? endMs - span
  if (startMs > endMs) {
    return {
      issues: [
        { loc: ['query', 'end_datetime'], msg: 'end_datetime must not be before start_datetime', type: 'value_error' },
      ],
    }
  }
  const limit = Date.UTC(9999, 0, 1)
  if (Math.abs(startMs) > limit || Math.abs(endMs) > limit) {
    return { issues: [{ loc: ['query', 'start_datetime'], msg: 'Datetime out of range', type: 'value_error' }] }
  }
  return { startMs, endMs }
}
