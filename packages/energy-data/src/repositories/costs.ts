import type pg from 'pg'
import { meterEntry } from '../catalogue/meters.ts'
import { type Commodity, commodityOf, KINDS, type KindName } from '../catalogue/quantities.ts'
import { type Timeline, timelineOf, timelineWithin } from '../domain/rates.ts'
import { HOUR_MS } from '../domain/time.ts'
import type { SqlField } from '../export/encoders.ts'
import { METER_QUARTER_VALUE } from './meter-value.ts'
import { loadRateVersions, type RateKind } from './rates.ts'

/**
 * The cost and the emissions of `/data/meters` buckets (`cost=true`, `co2=true`): the sum over a
 * bucket's quarter hours of the meter's amount times the price (the factor) in force at each
 * (`domain/rates.ts`), for the energy and volume meters, real or virtual; a bucket holding a
 * quarter hour that nothing prices has none (null, never a partial sum, never 0). The prices of the
 * window are a timeline computed once per request and handed to each slice's query as arrays
 * (`width_bucket` finds a quarter hour's piece), so the database reads only the amounts: the
 * quarter hours, or the hourly rollups where every price holds for whole UTC hours and buckets
 * are made of whole hours (a year of hourly cost: 8,760 rollup rows, not 35,040 quarter hours).
 */

export type PricedMeasure = 'cost' | 'co2'

const RATE_KIND: Record<PricedMeasure, RateKind> = { cost: 'tariff', co2: 'emission' }

interface PricedPart {
  meterIds: number[]
  timeline: Timeline
}

export interface PricePlan {
  measures: Array<{ measure: PricedMeasure; parts: PricedPart[] }>
  /** The tariffs' currency (one for all). */
  currency: string | null
  /** Where the amounts are read: the quarter hours, or the hourly rollups (see above). */
  source: 'quarter' | 'hour'
}

/** The catalogue kind of each meter: the series catalogue's, a virtual meter's inputs'. */
async function meterKinds(pool: pg.Pool, ids: readonly number[]): Promise<Map<number, KindName>> {
  const kinds = new Map<number, KindName>()
  for (const id of ids) {
    const entry = meterEntry(id)
    if (entry) kinds.set(id, entry.kind)
  }
  const rest = ids.filter((id) => !kinds.has(id))
  if (rest.length > 0) {
    const { rows } = await pool.query<{ id: number; kind: KindName }>(
      'select id, kind from virtual_meters where id = any($1::int[])',
      [rest],
    )
    for (const row of rows) if (row.kind in KINDS) kinds.set(row.id, row.kind)
  }
  return kinds
}

/**
 * What pricing the window `[lo, hi)` of meters `ids` needs. `hourBuckets`: the buckets are made of
 * whole UTC hours, so the hourly rollups serve where the prices allow.
 */
export async function planPricing(
  pool: pg.Pool,
  ids: readonly number[],
  measures: readonly PricedMeasure[],
  window: { lo: number; hi: number; hourBuckets: boolean },
): Promise<PricePlan> {
  const kinds = await meterKinds(pool, ids)
  const byCommodity = new Map<Commodity, number[]>()
  for (const id of ids) {
    const kind = kinds.get(id)
    const commodity = kind ? commodityOf(kind) : undefined
    if (commodity) byCommodity.set(commodity, [...(byCommodity.get(commodity) ?? []), id])
  }
  let currency: string | null = null
  const plan: PricePlan['measures'] = []
  for (const measure of measures) {
    const { versions, currency: found } = await loadRateVersions(pool, RATE_KIND[measure], window.lo, window.hi)
    if (measure === 'cost') currency = found
    plan.push({
      measure,
      parts: [...byCommodity].map(([commodity, meterIds]) => ({
        meterIds,
        timeline: timelineOf(versions, commodity, window.lo, window.hi),
      })),
    })
  }
  const wholeHours = plan.every((m) => m.parts.every((p) => p.timeline.edges.every((e) => e % HOUR_MS === 0)))
  return { measures: plan, currency, source: window.hourBuckets && wholeHours ? 'hour' : 'quarter' }
}

/** The fields a priced row adds, read from the priced bucket aliased `x`. */
export function pricedFields(plan: PricePlan, param: (value: unknown) => string): SqlField[] {
  return plan.measures.flatMap(({ measure }): SqlField[] => [
    { name: `${measure}_value`, sql: `x.${measure}_value`, kind: 'number' },
    ...(measure === 'cost'
      ? [
          {
            name: 'cost_currency',
            sql: `case when x.cost_value is not null then ${param(plan.currency)}::text end`,
            kind: 'string' as const,
          },
        ]
      : []),
    { name: `${measure}_versions`, sql: `x.${measure}_versions`, kind: 'string' },
  ])
}

/** What a priced bucket sums, by where its rows are read: the quarter hours, or the hourly rollups. */
const AMOUNTS = {
  quarter: { v: METER_QUARTER_VALUE, n: `case when ${METER_QUARTER_VALUE} is null then 0 else 1 end` },
  hour: { v: 'avg_sum', n: 'values_n' },
}

/**
 * The columns a row read for a priced bucket adds (`r_<measure>`, the price or factor in force at
 * its time; `n_<measure>`, the version), for the row's time column `time`. `param` adds a
 * parameter, a function of the slice's bounds for the timelines.
 */
export function pricedColumns(
  plan: PricePlan,
  time: string,
  param: (value: unknown | ((lo: Date, hi: Date) => unknown)) => string,
): string {
  const within = (pick: (t: Timeline) => unknown, part: PricedPart) => (lo: Date, hi: Date) =>
    pick(timelineWithin(part.timeline, lo.getTime(), hi.getTime()))
  return plan.measures
    .map(({ measure, parts }) => {
      const piece = (part: PricedPart, array: string, pick: (t: Timeline) => unknown) =>
        `(${param(within(pick, part))}::${array})[width_bucket(${time}, ${param(
          within((t) => t.edges.map((e) => new Date(e)), part),
        )}::timestamptz[])]`
      const choose = (array: string, pick: (t: Timeline) => unknown) =>
        parts.length === 0
          ? 'null'
          : `case ${parts
              .map((part) => `when meter_id = any(${param(part.meterIds)}::int[]) then ${piece(part, array, pick)}`)
              .join(' ')} end`
      return `${choose('float8[]', (t) => t.values)} as r_${measure}, ${choose('int[]', (t) => t.versions)} as n_${measure}`
    })
    .join(', ')
}

/**
 * The aggregates of a priced bucket over its rows (`pricedColumns`): per measure its value (null
 * when a row holding an amount has no price) and the versions, comma-separated.
 */
export function pricedAggregates(plan: PricePlan): string {
  const { v, n } = AMOUNTS[plan.source]
  return plan.measures
    .map(
      ({ measure: m }) =>
        `case when sum(${n}) = sum(case when r_${m} is not null then ${n} else 0 end) then sum(${v} * r_${m}) end as ${m}_value,
         nullif(array_to_string(array_agg(distinct n_${m} order by n_${m}) filter (where ${n} > 0), ','), '') as ${m}_versions`,
    )
    .join(', ')
}

/** A group column's amounts priced per local day: the cost (value) of each day, and of the whole window. */
export interface PricedDays {
  days: Array<{ day: string; value: number | null; versions: string | null }>
  /** The window's: null when a quarter hour holding an amount has no price. */
  total: number | null
  currency: string | null
}

/**
 * The amounts of `group.column` (times `factor`: kW x 0.25 h = kWh) over `[from, to)` priced by
 * the tariffs of `commodity` in force at each quarter hour, per local day of `zone`.
 */
export async function pricedDays(
  pool: pg.Pool,
  series: { table: string; column: string; factor: number; commodity: Commodity },
  from: number,
  to: number,
  zone: string,
): Promise<PricedDays> {
  const { versions, currency } = await loadRateVersions(pool, 'tariff', from, to)
  const timeline = timelineOf(versions, series.commodity, from, to)
  // the table and column are the catalogue's, never input
  const { rows } = await pool.query<{
    day: string
    value: number | null
    versions: string | null
    n: number
    priced: number
  }>(
    `select day, case when count(a) = count(a * p) then sum(a * p) end as value, count(a)::int as n, count(a * p)::int as priced,
       nullif(array_to_string(array_agg(distinct v order by v) filter (where a is not null), ','), '') as versions
     from (
       select to_char(time_15m at time zone $3, 'YYYY-MM-DD') as day, ${series.column} * $4::float8 as a,
         ($5::float8[])[width_bucket(time_15m, $7::timestamptz[])] as p, ($6::int[])[width_bucket(time_15m, $7::timestamptz[])] as v
       from ${series.table} where time_15m >= $1 and time_15m < $2
     ) s group by day order by day`,
    [
      new Date(from),
      new Date(to),
      zone,
      series.factor,
      timeline.values,
      timeline.versions,
      timeline.edges.map((e) => new Date(e)),
    ],
  )
  const whole = rows.every((r) => r.n === r.priced)
  return {
    days: rows.map((r) => ({ day: r.day, value: r.value, versions: r.versions })),
    total: whole && rows.some((r) => r.n > 0) ? rows.reduce((s, r) => s + (r.value ?? 0), 0) : null,
    currency,
  }
}

/**
 * The cost (or emissions) of each of meters `ids` over `[lo, hi)`: the sum over its quarter hours
 * tagged `tags` of amount x price, null where one has no price; a meter without a quarter hour
 * there is absent.
 */
export async function pricedTotals(
  pool: pg.Pool,
  ids: readonly number[],
  measure: PricedMeasure,
  window: { lo: number; hi: number; tags: readonly string[] },
): Promise<{ totals: Map<number, number | null>; currency: string | null }> {
  const plan = await planPricing(pool, ids, [measure], { lo: window.lo, hi: window.hi, hourBuckets: false })
  const [lo, hi] = [new Date(window.lo), new Date(window.hi)]
  const values: unknown[] = [lo, hi, ids, window.tags]
  const param = (value: unknown) => {
    values.push(typeof value === 'function' ? (value as (lo: Date, hi: Date) => unknown)(lo, hi) : value)
    return `$${values.length}`
  }
  const columns = pricedColumns(plan, 'time_15m', param)
  const { rows } = await pool.query<{ meter_id: number; value: number | null }>(
    `select meter_id, ${pricedAggregates(plan)} from (
       select *, ${columns} from data_15m
       where meter_id = any($3::int[]) and tag = any($4::text[]) and time_15m >= $1 and time_15m < $2
     ) s group by meter_id`,
    values,
  )
  return {
    totals: new Map(
      rows.map((r) => [r.meter_id, (r as unknown as Record<string, number | null>)[`${measure}_value`] ?? null]),
    ),
    currency: plan.currency,
  }
}
