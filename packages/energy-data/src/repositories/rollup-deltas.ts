import type pg from 'pg'
import { GROUP_COLUMNS, type GroupName } from '../catalogue/groups.ts'
import { AMOUNT_METER_IDS, METERS } from '../catalogue/meters.ts'
import { bucketStart, nextBucket } from '../domain/buckets.ts'
import type { QuarterStats } from '../domain/quarter-fold.ts'
import { HOUR_MS } from '../domain/time.ts'
import { LEVEL_OF, type RollupLevel, recomputeMeterRollups } from './rollups.ts'

/**
 * The rollups kept by deltas: an hour, day or month row changes by what its quarter hours changed
 * (TimescaleDB's continuous aggregates, without their lag: in the writer's transaction). Counts
 * and sums move by the difference; a minimum or maximum only where the new one is beyond it. What
 * a difference cannot say - a meter's quarter hour leaving its tag, a minimum that rose, a value
 * that became null - makes that meter's period "dirty", recomputed from the level below it (at
 * most four quarter hours, a day's hours, a month's days). A writer holds its meters' locks, so a
 * meter's rows have one writer at a time; group rows are shared by meters and only ever move by
 * counts and sums, updates that commute.
 */

/** A meter's quarter hour before and after a write. */
export interface MeterChange {
  meterId: number
  /** The quarter hour's start, epoch ms. */
  t: number
  old: QuarterStats | null
  next: QuarterStats
}

/** A group row's columns before and after a write; `inserted`: the row is new. */
export interface GroupChange {
  t: number
  inserted: boolean
  old: Array<number | null>
  next: Array<number | null>
}

/** The periods of each level holding a quarter hour: UTC hours, and the calendar zone's days and months. */
export class Periods {
  private readonly zone: string | undefined
  /** The last period computed per level: the quarter hours of a write mostly share it. */
  private readonly last = new Map<RollupLevel, [number, number]>()

  constructor(zone: string | undefined) {
    this.zone = zone
  }

  /** The levels kept: hours always, days and months once the calendar zone is set. */
  get levels(): RollupLevel[] {
    return this.zone === undefined ? ['hour'] : ['hour', 'day', 'month']
  }

  /** The period `[start, end)` of `level` holding instant `t`. */
  of(level: RollupLevel, t: number): [number, number] {
    if (level === 'hour') {
      const start = Math.floor(t / HOUR_MS) * HOUR_MS
      return [start, start + HOUR_MS]
    }
    const last = this.last.get(level)
    if (last && t >= last[0] && t < last[1]) return last
    const aggregation = LEVEL_OF[level].aggregation
    const start = bucketStart(aggregation, this.zone as string, t)
    const period: [number, number] = [start, nextBucket(aggregation, this.zone as string, start)]
    this.last.set(level, period)
    return period
  }
}

/** The meters whose rollups move by deltas: the catalogue's (a virtual meter's periods are recomputed). */
const CATALOGUE_IDS = new Set<number>(METERS.map((m) => m.id))

/** A meter's quarter-hour value: the amount of an energy or volume meter, the mean of any other. */
export const quarterValue = (meterId: number, row: QuarterStats): number | null =>
  AMOUNT_METER_IDS.includes(meterId) ? row.sum : row.avg

interface MeterDelta {
  level: RollupLevel
  start: number
  end: number
  meterId: number
  tag: string
  quarters: number
  valuesN: number
  valueSum: number
  min: number | null
  max: number | null
  sum: number
  hasSum: boolean
  count: number
  hasCount: boolean
}

const shrinks = (old: QuarterStats, next: QuarterStats): boolean =>
  (old.sum !== null && next.sum === null) ||
  (old.count !== null && next.count === null) ||
  (old.min !== null && (next.min === null || next.min > old.min)) ||
  (old.max !== null && (next.max === null || next.max < old.max))

/** The rollup rows of these meters' changes, moved by their deltas; dirty periods recomputed. */
export async function applyMeterRollups(
  client: pg.PoolClient,
  changes: readonly MeterChange[],
  periods: Periods,
): Promise<void> {
  if (changes.length === 0) return
  const deltas = new Map<string, MeterDelta>()
  const dirty = new Map<RollupLevel, Map<string, { meterId: number; start: number; end: number }>>()
  const markDirty = (level: RollupLevel, meterId: number, [start, end]: [number, number]) => {
    const at = dirty.get(level) ?? new Map()
    dirty.set(level, at)
    at.set(`${meterId}|${start}`, { meterId, start, end })
  }
  for (const change of changes) {
    const { meterId, old, next } = change
    if (!CATALOGUE_IDS.has(meterId)) {
      // a virtual meter: its value's column follows its kind (meter-value.ts), its periods are recomputed
      for (const level of periods.levels) markDirty(level, meterId, periods.of(level, change.t))
      continue
    }
    const same = old !== null && old.tag === next.tag
    for (const level of periods.levels) {
      const period = periods.of(level, change.t)
      if (old && (!same || shrinks(old, next))) markDirty(level, meterId, period)
      const key = `${level}|${meterId}|${period[0]}|${next.tag}`
      const d =
        deltas.get(key) ??
        ({
          level,
          start: period[0],
          end: period[1],
          meterId,
          tag: next.tag,
          quarters: 0,
          valuesN: 0,
          valueSum: 0,
          min: null,
          max: null,
          sum: 0,
          hasSum: false,
          count: 0,
          hasCount: false,
        } satisfies MeterDelta)
      deltas.set(key, d)
      // the new row's part; when the tag stayed, less the old row's part
      const before = same ? old : null
      const v = quarterValue(meterId, next)
      const w = before ? quarterValue(meterId, before) : null
      d.quarters += before ? 0 : 1
      d.valuesN += (v !== null ? 1 : 0) - (w !== null ? 1 : 0)
      d.valueSum += (v ?? 0) - (w ?? 0)
      if (next.min !== null) d.min = d.min === null ? next.min : Math.min(d.min, next.min)
      if (next.max !== null) d.max = d.max === null ? next.max : Math.max(d.max, next.max)
      if (next.sum !== null || before?.sum != null) {
        d.hasSum = true
        d.sum += (next.sum ?? 0) - (before?.sum ?? 0)
      }
      if (next.count !== null || before?.count != null) {
        d.hasCount = true
        d.count += (next.count ?? 0) - (before?.count ?? 0)
      }
    }
  }
  const rows = [...deltas.values()].sort(
    (a, b) =>
      a.level.localeCompare(b.level) || a.meterId - b.meterId || a.start - b.start || a.tag.localeCompare(b.tag),
  )
  const fresh = rows.filter((d) => d.quarters > 0)
  if (fresh.length > 0) {
    // the rows these deltas start, empty, so that one update moves every row alike
    await client.query(
      `insert into data_rollup (level, start, meter_id, tag, quarters, values_n)
       select level, start, meter_id, tag, 0, 0
       from unnest($1::text[], $2::timestamptz[], $3::int[], $4::text[]) as k(level, start, meter_id, tag)
       on conflict do nothing`,
      [
        fresh.map((d) => d.level),
        fresh.map((d) => new Date(d.start)),
        fresh.map((d) => d.meterId),
        fresh.map((d) => d.tag),
      ],
    )
  }
  if (rows.length > 0)
    await client.query(
      `update data_rollup r set
       quarters = r.quarters + d.dq,
       values_n = r.values_n + d.dn,
       avg_sum = case when r.values_n + d.dn > 0 then coalesce(r.avg_sum, 0) + d.dv end,
       min_value = least(r.min_value, d.mn),
       max_value = greatest(r.max_value, d.mx),
       sum_value = case when d.hs then coalesce(r.sum_value, 0) + d.ds else r.sum_value end,
       count_value = case when d.hc then coalesce(r.count_value, 0) + d.dc else r.count_value end
     from unnest($1::text[], $2::timestamptz[], $3::int[], $4::text[], $5::int[], $6::int[], $7::float8[],
       $8::float8[], $9::float8[], $10::float8[], $11::bool[], $12::int8[], $13::bool[])
       as d(level, start, meter_id, tag, dq, dn, dv, mn, mx, ds, hs, dc, hc)
     where r.level = d.level and r.meter_id = d.meter_id and r.start = d.start and r.tag = d.tag`,
      [
        rows.map((d) => d.level),
        rows.map((d) => new Date(d.start)),
        rows.map((d) => d.meterId),
        rows.map((d) => d.tag),
        rows.map((d) => d.quarters),
        rows.map((d) => d.valuesN),
        rows.map((d) => d.valueSum),
        rows.map((d) => d.min),
        rows.map((d) => d.max),
        rows.map((d) => d.sum),
        rows.map((d) => d.hasSum),
        rows.map((d) => d.count),
        rows.map((d) => d.hasCount),
      ],
    )
  // dirty periods from the level below, finest first: a day is made of hours already exact
  for (const level of periods.levels) {
    const keys = [...(dirty.get(level)?.values() ?? [])]
    if (keys.length > 0) await recomputeMeterRollups(client, level, keys)
  }
}

/** A group's rollup rows moved by its rows' changes: counts and sums only, so they commute. */
export async function applyGroupRollups(
  client: pg.PoolClient,
  group: GroupName,
  columns: readonly string[],
  changes: readonly GroupChange[],
  periods: Periods,
): Promise<void> {
  if (changes.length === 0) return
  const deltas = new Map<string, { level: RollupLevel; start: number; quarters: number; n: number[]; sum: number[] }>()
  for (const change of changes) {
    for (const level of periods.levels) {
      const [start] = periods.of(level, change.t)
      const key = `${level}|${start}`
      const d = deltas.get(key) ?? { level, start, quarters: 0, n: columns.map(() => 0), sum: columns.map(() => 0) }
      deltas.set(key, d)
      if (change.inserted) d.quarters += 1
      columns.forEach((_, i) => {
        const v = change.next[i] ?? null
        const w = change.old[i] ?? null
        d.n[i] = (d.n[i] as number) + (v !== null ? 1 : 0) - (w !== null ? 1 : 0)
        d.sum[i] = (d.sum[i] as number) + (v ?? 0) - (w ?? 0)
      })
    }
  }
  const rows = [...deltas.values()].sort((a, b) => a.level.localeCompare(b.level) || a.start - b.start)
  const rollup = `${group}_rollup`
  const fresh = rows.filter((d) => d.quarters > 0)
  if (fresh.length > 0) {
    const every = GROUP_COLUMNS[group]
    await client.query(
      `insert into ${rollup} (level, start, quarters, ${every.map((c) => `${c}_n`).join(', ')})
       select level, start, 0, ${every.map(() => '0').join(', ')}
       from unnest($1::text[], $2::timestamptz[]) as k(level, start)
       on conflict do nothing`,
      [fresh.map((d) => d.level), fresh.map((d) => new Date(d.start))],
    )
  }
  const set = columns.map(
    (c, i) =>
      `${c}_n = r.${c}_n + d.n${i}, ${c}_sum = case when r.${c}_n + d.n${i} > 0 then coalesce(r.${c}_sum, 0) + d.s${i} end`,
  )
  const arrays = columns.flatMap((_, i) => [`$${2 * i + 4}::int[]`, `$${2 * i + 5}::float8[]`])
  const names = columns.flatMap((_, i) => [`n${i}`, `s${i}`])
  await client.query(
    `update ${rollup} r set quarters = r.quarters + d.dq, ${set.join(', ')}
     from unnest($1::text[], $2::timestamptz[], $3::int[], ${arrays.join(', ')}) as d(level, start, dq, ${names.join(', ')})
     where r.level = d.level and r.start = d.start`,
    [
      rows.map((d) => d.level),
      rows.map((d) => new Date(d.start)),
      rows.map((d) => d.quarters),
      ...columns.flatMap((_, i) => [rows.map((d) => d.n[i]), rows.map((d) => d.sum[i])]),
    ],
  )
}
