import type pg from 'pg'
import { GROUP_COLUMNS, type GroupName, totalledSeries } from '../catalogue/groups.ts'
import { AGGREGATIONS, type Aggregation, sliceBuckets } from '../domain/aggregation.ts'
import { bucketCount, bucketEdges, bucketStart, nextBucket } from '../domain/buckets.ts'
import { HOUR_MS } from '../domain/time.ts'
import type { RowSql, SqlField } from '../export/encoders.ts'
import {
  type PricedMeasure,
  type PricePlan,
  planPricing,
  pricedAggregates,
  pricedColumns,
  pricedFields,
} from './costs.ts'
import { METER_QUARTER_VALUE } from './meter-value.ts'
import { LEVEL_OF, type RollupLevel, servingLevel } from './rollups.ts'

/**
 * Reads of the 15-minute tables, bucketed. Rows come back as `[epoch ms, fields as text]`
 * straight from `pg`, the text written by the expression the caller's encoding gives (`RowSql`):
 * this module knows which fields a source has and how to read them, not how they are printed.
 * The SQL names only identifiers from the series catalogue.
 *
 * A long window is read as consecutive time slices, each one short independent query
 * (`time_15m >= a and time_15m < b`, slice edges on bucket edges). Memory stays flat like with
 * a cursor, but no transaction stays open while a slow client reads: on the embedded database,
 * which runs one transaction at a time, a cursor would block every other request meanwhile.
 */

export type SeriesSource =
  | { kind: 'group'; group: GroupName }
  | { kind: 'meters'; ids: readonly number[]; tags: readonly string[] }

export interface SeriesRequest {
  source: SeriesSource
  aggregation: Aggregation
  zone: string
  startMs: number
  endMs: number
  /** `none`: buckets without a stored quarter hour are left out; `null`: every bucket, empty ones with null fields. */
  fill: 'none' | 'null'
  /** Adds `coverage`: the share of the bucket's quarter hours that hold a stored row. */
  coverage: boolean
  /** Adds the exact totals: `<column>_total` of a group's amount columns, `total_value` of a meter. */
  totals?: boolean
  /** Reads every bucket from the quarter hours, never from the rollups (the benchmark's baseline). */
  quarterScan?: boolean
  /** `/data/meters`: adds each bucket's cost (`cost`) and emissions (`co2`) at the rates in force. */
  priced?: readonly PricedMeasure[]
}

interface SeriesPlan {
  /** First bucket start and end of the last bucket (exclusive), epoch ms. */
  lo: number
  hi: number
  /** Slice edges from lo to hi. */
  edges: number[]
  /** Upper bound of the rows the window holds: buckets x series, exact with `fill=null`. */
  bound: number
  /** The rollup level buckets are read from (`servingLevel`); none: the quarter hours. */
  level: RollupLevel | undefined
  /** The prices of the window, when the request is priced. */
  pricing?: PricePlan
}

/** An instant in SQL as epoch milliseconds (float8): read by `pg` as a number, no Date to parse. */
export const EPOCH_MS = (expr: string) => `(extract(epoch from ${expr}) * 1000)::float8`

/** Whether buckets are fixed UTC slots the database can compute alone (quarter and half hours). */
const fixedSlots = (aggregation: Aggregation): boolean => {
  const a = AGGREGATIONS[aggregation]
  return a.kind === 'fixed' && a.minutes < 60
}

/**
 * SQL of the buckets of one slice. Quarter and half hours are UTC slots; longer buckets are looked
 * up in the slice's bucket edges (`edges`, a `timestamptz[]` parameter computed by `bucketEdges`),
 * so the local calendar is computed in one place only: `width_bucket` finds a quarter hour's
 * bucket by binary search.
 */
function bucketing(aggregation: Aggregation, edges: string) {
  const a = AGGREGATIONS[aggregation]
  if (fixedSlots(aggregation)) {
    const minutes = (a as { minutes: number }).minutes
    return {
      of: (expr: string) => `date_bin('${minutes} minutes', ${expr}, timestamptz '2000-01-01 00:00:00+00')`,
      quarters: (_b: string) => `${minutes / 15}`,
      series: `select generate_series($1::timestamptz, $2::timestamptz - interval '${minutes} minutes', interval '${minutes} minutes') as b`,
    }
  }
  return {
    of: (expr: string) => `(${edges})[width_bucket(${expr}, ${edges})]`,
    quarters: (b: string) => `(extract(epoch from (${edges})[width_bucket(${b}, ${edges}) + 1] - ${b}) / 900)`,
    series: `select unnest((${edges})[1:cardinality(${edges}) - 1]) as b`,
  }
}

function seriesCount(source: SeriesSource): number {
  return source.kind === 'meters' ? source.ids.length : 1
}

/** The rows a request answers at most, and about, by arithmetic alone: nothing allocated, nothing read. */
export function seriesBound(request: SeriesRequest): { atMost: number; about: number } {
  const { aggregation, zone } = request
  const lo = bucketStart(aggregation, zone, request.startMs)
  const hi = nextBucket(aggregation, zone, bucketStart(aggregation, zone, request.endMs))
  const count = bucketCount(aggregation, lo, hi)
  const series = seriesCount(request.source)
  return { atMost: count.atMost * series, about: count.about * series }
}

/** Bucket-aligned window and slice edges, from the local calendar (`bucketEdges`). */
export async function planSeries(pool: pg.Pool, request: SeriesRequest): Promise<SeriesPlan> {
  const { aggregation, zone, source, priced } = request
  const lo = bucketStart(aggregation, zone, request.startMs)
  const hi = nextBucket(aggregation, zone, bucketStart(aggregation, zone, request.endMs))
  const series = seriesCount(source)
  let per = sliceBuckets(aggregation, series)
  let buckets = 0
  let level: RollupLevel | undefined
  let pricing: PricePlan | undefined
  const edges: number[] = []
  if (fixedSlots(aggregation)) {
    // quarter and half hours are the same in every zone in use: arithmetic
    const length = nextBucket(aggregation, zone, 0)
    buckets = (hi - lo) / length
    if (source.kind === 'meters' && priced?.length) {
      pricing = await planPricing(pool, source.ids, priced, { lo, hi, hourBuckets: false })
    }
    for (let e = lo; e < hi; e += length * per) edges.push(e)
  } else {
    // a window far wider than its data (a century of hours) is cut to the stored span before its
    // edges are computed: they are allocated, one number a bucket. fill=null answers every bucket:
    // the row cap has refused such a window by arithmetic before (bucketCount)
    let to = hi
    let from = lo
    if (request.fill !== 'null' && bucketCount(aggregation, lo, hi).atMost > TRIM_FROM_BUCKETS) {
      const span = await storedSpan(pool, request, lo, hi)
      from = span ? bucketStart(aggregation, zone, span.first) : lo
      to = span ? nextBucket(aggregation, zone, bucketStart(aggregation, zone, span.last)) : lo
    }
    const all = bucketEdges(aggregation, zone, from, to)
    buckets = all.length - 1
    if (source.kind === 'meters' && priced?.length) {
      // a priced bucket's values and amounts come from the same rows: the hourly rollups where the
      // prices hold for whole hours, else the quarter hours (costs.ts)
      const hourBuckets = !request.quarterScan && all.every((e) => e % HOUR_MS === 0)
      pricing = await planPricing(pool, source.ids, priced, { lo, hi, hourBuckets })
      level = pricing.source === 'hour' ? 'hour' : undefined
    } else {
      level = request.quarterScan ? undefined : await servingLevel(pool, aggregation, zone, all)
    }
    // a slice reads fewer rows from rollups: more buckets each, as many rows out as before
    if (level) per = Math.min(per * LEVEL_OF[level].quarters, Math.max(1, Math.floor(2500 / series)))
    for (let i = 0; i < buckets; i += per) edges.push(all[i] as number)
    // the slices end with the stored span: none reaches over the empty years after it
    edges.push(to)
  }
  if (fixedSlots(aggregation)) edges.push(hi)
  return {
    lo,
    hi,
    edges: await trimToData(pool, request, edges),
    bound: buckets * series,
    level,
    ...(pricing ? { pricing } : {}),
  }
}

/** Buckets beyond which a calendar window is cut to its stored span before its edges are computed. */
const TRIM_FROM_BUCKETS = 4096

/** Slices beyond which a window is trimmed to the stored rows (below it, empty slices cost little). */
const TRIM_FROM_SLICES = 16

/**
 * The slice edges that cover the rows actually stored in the window: a window of centuries
 * would otherwise be thousands of queries over empty ranges. Two index lookups find the first
 * and last stored quarter hour; edges stay on bucket edges. With `fill=null` every bucket is
 * answered, stored or not: nothing is trimmed (the row cap bounds such a window).
 */
/** The first and last stored quarter hour of the request's series in `[lo, hi)`: two index lookups a series. */
async function storedSpan(
  pool: pg.Pool,
  request: SeriesRequest,
  lo: number,
  hi: number,
): Promise<{ first: number; last: number } | undefined> {
  const { source } = request
  const one = (table: string, filter: string, order: 'asc' | 'desc') =>
    `(select time_15m from ${table} where ${filter} time_15m >= $1 and time_15m < $2 order by time_15m ${order} limit 1)`
  const result =
    source.kind === 'group'
      ? await pool.query<{ first: number | null; last: number | null }>(
          `select ${EPOCH_MS(one(`${source.group}_15m`, '', 'asc'))} as first, ${EPOCH_MS(one(`${source.group}_15m`, '', 'desc'))} as last`,
          [new Date(lo), new Date(hi)],
        )
      : await pool.query<{ first: number | null; last: number | null }>(
          `select ${EPOCH_MS('min(f)')} as first, ${EPOCH_MS('max(l)')} as last from unnest($3::int[]) id,
             lateral (select ${one('data_15m', 'meter_id = id and', 'asc')} f, ${one('data_15m', 'meter_id = id and', 'desc')} l) x`,
          [new Date(lo), new Date(hi), source.ids],
        )
  const first = result.rows[0]?.first
  const last = result.rows[0]?.last
  if (first === null || first === undefined || last === null || last === undefined) return undefined
  return { first, last }
}

async function trimToData(pool: pg.Pool, request: SeriesRequest, edges: number[]): Promise<number[]> {
  if (edges.length <= TRIM_FROM_SLICES + 1 || request.fill === 'null') return edges
  const span = await storedSpan(pool, request, edges[0] as number, edges[edges.length - 1] as number)
  if (!span) return [edges[0] as number, edges[edges.length - 1] as number]
  const { first, last } = span
  let from = 0
  while (from + 1 < edges.length && (edges[from + 1] as number) <= first) from++
  let to = edges.length - 1
  while (to - 1 > from && (edges[to - 1] as number) > last) to--
  return edges.slice(from, to + 1)
}

interface SliceSql {
  /** Without its `order by`, so it can be counted. */
  text: string
  order: string
  values: (lo: Date, hi: Date) => unknown[]
}

/**
 * A meter's bucket value: the mean of its quarter hours' values (`METER_QUARTER_VALUE`), each quarter hour
 * weighing its 15 minutes whatever number of samples it took, as a group column's bucket is the
 * mean of its quarter hours: a column mirroring a meter and the meter give one number.
 */
export const METER_BUCKET_MEAN = `avg(${METER_QUARTER_VALUE})`

const METER_FIELDS = [
  { name: 'meter_id', kind: 'integer' },
  { name: 'avg_value', kind: 'number' },
  { name: 'min_value', kind: 'number' },
  { name: 'max_value', kind: 'number' },
  { name: 'sum_value', kind: 'number' },
  { name: 'count_value', kind: 'integer' },
  { name: 'tag', kind: 'string' },
] as const

const totalColumns = (group: GroupName): string[] => totalledSeries(group).map((s) => s.column)

/** The fields after `time_15m` of the rows of a request, in order. */
export function seriesFields(request: Pick<SeriesRequest, 'source' | 'coverage' | 'totals' | 'priced'>): string[] {
  const { source } = request
  const fields: string[] = source.kind === 'group' ? [...GROUP_COLUMNS[source.group]] : METER_FIELDS.map((f) => f.name)
  if (request.totals)
    fields.push(...(source.kind === 'group' ? totalColumns(source.group).map((c) => `${c}_total`) : ['total_value']))
  if (source.kind === 'meters') {
    for (const measure of request.priced ?? [])
      fields.push(
        ...(measure === 'cost' ? ['cost_value', 'cost_currency', 'cost_versions'] : ['co2_value', 'co2_versions']),
      )
  }
  return request.coverage ? [...fields, 'coverage'] : fields
}

/** What an aggregated bucket is computed from: the quarter hours, or the hourly rollups summing them. */
interface Source {
  table: string
  time: string
  rows: string
  level?: RollupLevel
}

/** The rows of one level of a rollup table (the level is a constant of the code, never input). */
const levelFilter = (source: Source) => (source.level ? `level = '${source.level}' and ` : '')

/** The statistics of a group column over a bucket, from either source (the same numbers). */
const GROUP_STATS = {
  quarter: { mean: (c: string) => `avg(${c})`, total: (c: string) => `sum(${c})` },
  rollup: { mean: (c: string) => `sum(${c}_sum) / nullif(sum(${c}_n), 0)`, total: (c: string) => `sum(${c}_sum)` },
}

/** A meter's bucket, from either source: avg, min, max, sum, count, tag, then the total of its quarter-hour values. */
const METER_STATS = {
  quarter: [METER_BUCKET_MEAN, 'min(min_value)', 'max(max_value)', 'sum(sum_value)', 'sum(count_value)'],
  rollup: [
    'sum(avg_sum) / nullif(sum(values_n), 0)',
    'min(min_value)',
    'max(max_value)',
    'sum(sum_value)',
    'sum(count_value)::bigint',
  ],
}
const METER_TOTAL = { quarter: `sum(${METER_QUARTER_VALUE})`, rollup: 'sum(avg_sum)' }
const MIXED_TAG = "case when min(tag) = max(tag) then min(tag) else 'mixed' end"

/**
 * The same statistics when a bucket is one rollup row (a day read from the days, one tag): the
 * sums of one row are the row's numbers, so nothing is grouped. The grouping cost more than the
 * rest of the read (a slice of 2,400 days: 6 of its 9 ms in the database).
 */
const ROW_STATS = {
  group: { mean: (c: string) => `${c}_sum / nullif(${c}_n, 0)`, total: (c: string) => `${c}_sum` },
  meter: ['avg_sum / nullif(values_n, 0)', 'min_value', 'max_value', 'sum_value', 'count_value', 'tag'],
  meterTotal: 'avg_sum',
}

/** Whether every bucket of a read from `level` is one stored row per series. */
const rowPerBucket = (request: SeriesRequest, level: RollupLevel | undefined): boolean =>
  level !== undefined &&
  LEVEL_OF[level].aggregation === request.aggregation &&
  request.fill === 'none' &&
  (request.source.kind === 'group' || request.source.tags.length === 1)

/**
 * The query of one slice. The default shape (no fill, no coverage) is the plain grouped read;
 * `coverage` adds the share of measured quarter hours per bucket; `fill=null` walks every bucket
 * of the slice (and every meter) and joins what is stored. With `rollup`, aggregated buckets are
 * read from the rollups of `level`, else from the quarter hours.
 */
function sliceSql(request: SeriesRequest, rowSql: RowSql, level?: RollupLevel, pricing?: PricePlan): SliceSql {
  const { source, aggregation, zone, fill, coverage } = request
  const raw = aggregation === '15 m'
  const from = level ? 'rollup' : 'quarter'
  const priced = source.kind === 'meters' && pricing !== undefined
  // $3: the slice's bucket edges, where the local calendar makes them and the query needs them
  const calendar = !fixedSlots(aggregation) && !(rowPerBucket(request, level) && !coverage && !priced)
  // parameters after those: a value, or a function of the slice's bounds (a priced slice's timelines)
  const extra: unknown[] = []
  const param = (value: unknown) => {
    extra.push(value)
    return `$${extra.length + (calendar ? 3 : 2)}`
  }
  const sliceValues = (lo: Date, hi: Date) =>
    extra.map((e) => (typeof e === 'function' ? (e as (lo: Date, hi: Date) => unknown)(lo, hi) : e))
  const bucket = bucketing(aggregation, '$3::timestamptz[]')
  const covered = (count: string, b: string) =>
    coverage ? [{ name: 'coverage', sql: `(${count})::float8 / ${bucket.quarters(b)}`, kind: 'number' as const }] : []
  const values = (lo: Date, hi: Date) =>
    calendar
      ? [
          lo,
          hi,
          bucketEdges(aggregation, zone, lo.getTime(), hi.getTime()).map((e) => new Date(e)),
          ...sliceValues(lo, hi),
        ]
      : [lo, hi, ...sliceValues(lo, hi)]

  if (source.kind === 'group') {
    const columns = GROUP_COLUMNS[source.group]
    const totals = request.totals ? totalColumns(source.group) : []
    const table: Source = level
      ? { table: `${source.group}_rollup`, time: 'start', rows: 'sum(quarters)', level }
      : { table: `${source.group}_15m`, time: 'time_15m', rows: 'count(*)' }
    const stats = GROUP_STATS[from]
    const fields = (wrap: (c: string) => string, total: (c: string) => string, count: string, b: string) =>
      rowSql([
        ...columns.map((c): SqlField => ({ name: c, sql: wrap(c), kind: 'number' })),
        ...totals.map((c): SqlField => ({ name: `${c}_total`, sql: total(c), kind: 'number' })),
        ...covered(count, b),
      ])
    const where = `${levelFilter(table)}${table.time} >= $1 and ${table.time} < $2`
    const bucketed = `(select ${bucket.of(table.time)} as b, * from ${table.table} where ${where}) s group by b`
    if (raw) {
      const text = `select ${EPOCH_MS('time_15m')}, ${fields(
        (c) => c,
        (c) => c,
        '1',
        'time_15m',
      )} from ${table.table} where ${where}`
      if (fill !== 'null') return { text, order: 'time_15m', values }
    }
    if (fill === 'null') {
      const stored = raw
        ? `select time_15m as b, ${columns.join(', ')}, 1 as n from ${table.table} where ${where}`
        : `select b, ${columns.map((c) => `${stats.mean(c)} as ${c}`).join(', ')},
             ${totals.map((c) => `${stats.total(c)} as ${c}_total, `).join('')}${table.rows} as n
           from ${bucketed}`
      const text = `select ${EPOCH_MS('k.b')}, ${fields(
        (c) => `x.${c}`,
        (c) => (raw ? `x.${c}` : `x.${c}_total`),
        'coalesce(x.n, 0)',
        'k.b',
      )}
        from (${bucket.series}) k left join (${stored}) x on x.b = k.b`
      return { text, order: 'k.b', values }
    }
    if (rowPerBucket(request, level)) {
      const text = `select ${EPOCH_MS('start')}, ${fields(ROW_STATS.group.mean, ROW_STATS.group.total, 'quarters', 'start')}
        from ${table.table} where ${where}`
      return { text, order: 'start', values }
    }
    const text = `select ${EPOCH_MS('b')}, ${fields(stats.mean, stats.total, table.rows, 'b')} from ${bucketed}`
    return { text, order: 'b', values }
  }

  const ids = param([...source.ids])
  const tags = param([...source.tags])
  const table: Source = level
    ? { table: 'data_rollup', time: 'start', rows: 'sum(quarters)', level }
    : { table: 'data_15m', time: 'time_15m', rows: 'count(*)' }
  const filter = `${levelFilter(table)}meter_id = any(${ids}::int[]) and tag = any(${tags}::text[]) and ${table.time} >= $1 and ${table.time} < $2`
  const costs = priced ? pricedFields(pricing, param) : []
  // the bucket's total: the sum of its quarter-hour values
  const meterFields = (sqls: string[], total: string, count: string, b: string) =>
    rowSql([
      ...METER_FIELDS.map((f, i): SqlField => ({ ...f, sql: sqls[i] as string })),
      ...(request.totals ? [{ name: 'total_value', sql: total, kind: 'number' as const }] : []),
      ...costs,
      ...covered(count, b),
    ])
  // a quarter hour shows its stored mean, priced (grouped, one row a group) or not
  const aggregated = [...(raw ? ['avg(avg_value)', ...METER_STATS.quarter.slice(1)] : METER_STATS[from]), MIXED_TAG]
  // a priced bucket (even a quarter hour) is grouped: its cost and emissions sum the rows its values are made of
  const bucketed = `(select ${bucket.of(table.time)} as b, *${
    priced ? `, ${pricedColumns(pricing, table.time, param)}` : ''
  } from ${table.table} where ${filter}) s group by b, meter_id`
  const stored =
    raw && !priced
      ? `select time_15m as b, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag,
         ${METER_QUARTER_VALUE} as total_value, 1 as n
       from data_15m where ${filter}`
      : `select b, meter_id, ${aggregated.map((sql, i) => `${sql} as ${METER_FIELDS[i + 1]?.name}`).join(', ')},
         ${METER_TOTAL[from]} as total_value, ${table.rows} as n${priced ? `, ${pricedAggregates(pricing)}` : ''}
       from ${bucketed}`
  if (fill === 'null') {
    // an empty bucket holds no sample: count_value 0, the statistics and the tag null
    const text = `select ${EPOCH_MS('k.b')}, ${meterFields(
      [
        'm.id',
        'x.avg_value',
        'x.min_value',
        'x.max_value',
        'x.sum_value',
        'case when x.n is null then 0 else x.count_value end',
        'x.tag',
      ],
      'x.total_value',
      'coalesce(x.n, 0)',
      'k.b',
    )}
      from (${bucket.series}) k cross join unnest(${ids}::int[]) m(id)
      left join (${stored}) x on x.b = k.b and x.meter_id = m.id`
    return { text, order: 'k.b, m.id', values }
  }
  if (priced) {
    const text = `select ${EPOCH_MS('x.b')}, ${meterFields(
      ['x.meter_id', 'x.avg_value', 'x.min_value', 'x.max_value', 'x.sum_value', 'x.count_value', 'x.tag'],
      'x.total_value',
      'x.n',
      'x.b',
    )}
      from (${stored}) x`
    return { text, order: 'x.b, x.meter_id', values }
  }
  if (rowPerBucket(request, level)) {
    const text = `select ${EPOCH_MS('start')}, ${meterFields(['meter_id', ...ROW_STATS.meter], ROW_STATS.meterTotal, 'quarters', 'start')}
      from ${table.table} where ${filter}`
    return { text, order: 'start, meter_id', values }
  }
  const text = raw
    ? `select ${EPOCH_MS('time_15m')},
         ${meterFields(
           ['meter_id', 'avg_value', 'min_value', 'max_value', 'sum_value', 'count_value', 'tag'],
           METER_QUARTER_VALUE,
           '1',
           'time_15m',
         )}
       from data_15m where ${filter}`
    : `select ${EPOCH_MS('b')}, ${meterFields(['meter_id', ...aggregated], METER_TOTAL[from], table.rows, 'b')}
       from ${bucketed}`
  return { text, order: raw ? 'time_15m, meter_id' : 'b, meter_id', values }
}

/** Exact number of rows the request returns (asked only when the bound exceeds the cap). */
export async function countSeries(
  pool: pg.Pool,
  request: SeriesRequest,
  plan: SeriesPlan,
  limit: number,
): Promise<number> {
  const { text, values } = sliceSql(request, (fields) => fields.map(() => "''").join(' || '), plan.level)
  // slice by slice, as the answer is read: each query carries the edges of its slice only, and
  // counting stops once past the limit
  let rows = 0
  for (let i = 0; i + 1 < plan.edges.length && rows <= limit; i++) {
    const lo = plan.edges[i] as number
    const hi = plan.edges[i + 1] as number
    if (hi <= lo) continue
    const result = await pool.query<{ n: number }>(
      `select count(*)::float8 as n from (${text}) x`,
      values(new Date(lo), new Date(hi)),
    )
    rows += result.rows[0]?.n ?? 0
  }
  return rows
}

/**
 * Slices read ahead of the one being written out, each on its own connection. Two: a year of
 * 15-minute CSV went from 0.67x to 0.88x the rows/s of `psql \copy` (one ahead left the service
 * waiting for the database half the time); three were no faster. An export then holds three
 * slices (about 2,500 rows each): ten years peaked at 165-172 MB RSS instead of 155-161 MB.
 */
const SLICES_AHEAD = 2

/** The rows of the window, one slice (a short query) at a time; nothing is held between slices. */
export async function* readSeries(
  pool: pg.Pool,
  request: SeriesRequest,
  plan: SeriesPlan,
  rowSql: RowSql,
): AsyncGenerator<Array<[number, string]>, void, undefined> {
  const { text: body, order, values } = sliceSql(request, rowSql, plan.level, plan.pricing)
  const text = `${body} order by ${order}`
  const slices: Array<[number, number]> = []
  for (let i = 0; i + 1 < plan.edges.length; i++) {
    const lo = plan.edges[i] as number
    const hi = plan.edges[i + 1] as number
    if (hi > lo) slices.push([lo, hi])
  }
  const fetchSlice = ([lo, hi]: [number, number]) => {
    const pending = pool.query<[number, string]>({ text, values: values(new Date(lo), new Date(hi)), rowMode: 'array' })
    // a reader that stops early never awaits its prefetched slice: its failure must not go unhandled
    pending.catch(() => undefined)
    return pending
  }
  // the next slices are read while the current one is written out: the database and the client overlap
  const ahead: Array<ReturnType<typeof fetchSlice>> = []
  let fetched = 0
  const fill = () => {
    while (ahead.length < SLICES_AHEAD && fetched < slices.length)
      ahead.push(fetchSlice(slices[fetched++] as [number, number]))
  }
  fill()
  while (ahead.length) {
    const result = await (ahead.shift() as ReturnType<typeof fetchSlice>)
    fill()
    if (result.rows.length) yield result.rows
  }
}
