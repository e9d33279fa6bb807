/**
 * The accepted `aggregation` values: PostgreSQL interval literals, as the original service
 * passed them to `time_bucket` (`m` is minutes, `mon` is months). Buckets of a day or longer
 * follow local days of the requested zone, so a DST day has 92 or 100 quarter hours.
 */
export const AGGREGATIONS = {
  '15 m': { kind: 'fixed', minutes: 15 },
  '30 m': { kind: 'fixed', minutes: 30 },
  '1 h': { kind: 'fixed', minutes: 60 },
  '1 d': { kind: 'calendar', unit: 'day', step: '1 day' },
  '1 w': { kind: 'calendar', unit: 'week', step: '7 days' },
  '1 mon': { kind: 'calendar', unit: 'month', step: '1 month' },
} as const

export type Aggregation = keyof typeof AGGREGATIONS
export const AGGREGATION_VALUES = Object.keys(AGGREGATIONS) as Aggregation[]

export const AGGREGATION_DESCRIPTION =
  'Bucket length, a PostgreSQL interval literal: `15 m` (the stored quarter hours), `30 m`, `1 h`, ' +
  '`1 d`, `1 w` (weeks start on Monday) or `1 mon`. Hour, day, week and month buckets follow the local ' +
  'calendar of `timezone`, each labelled with the offset in force at its start: a day starts at the first ' +
  'instant of its local date, so 2025-03-30 has 92 quarter hours in Europe/Rome and 2025-10-26 has 100, and ' +
  'in Africa/Cairo 2025-04-25 starts at 01:00+03:00 (its midnight was skipped); an hour is the quarter hours ' +
  'sharing a wall-clock hour and offset, so the hour repeated when clocks go back is two buckets. ' +
  "Each bucket holds the mean of its quarter hours' values, each weighing its 15 minutes (per-meter data: " +
  '`avg_value` so, of `sum_value` for an energy or water meter, then min of minima, max of maxima, sum of sums, ' +
  'sum of counts).'

/**
 * Buckets in each of the time slices a long window is read in: each slice is one short query
 * returning at most about 2500 rows across `series` series (meters) and reading at most about 600
 * days of quarter hours, so a request holds little memory however long its window.
 */
export function sliceBuckets(aggregation: Aggregation, series: number): number {
  const a = AGGREGATIONS[aggregation]
  const n = Math.max(1, series)
  if (a.kind === 'fixed') return Math.max(1, Math.floor(2500 / n))
  if (a.unit === 'day') return Math.max(1, Math.floor(600 / n))
  if (a.unit === 'week') return Math.max(1, Math.floor(90 / n))
  return Math.max(1, Math.floor(24 / n))
}
