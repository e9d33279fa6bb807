/**
 * Queries behind the public charts and reports. Every aggregate runs in the database (grouped by
 * local day, hour, weekday or month); what comes back is at most a few hundred rows, whatever
 * the range, except the 7-day 15-minute chart series (672 rows). Daily totals come from the
 * rollups where they serve the days; the other figures need the quarter hours of the range.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { GroupColumn, GroupName } from '../catalogue/groups.ts'
import type { EnergyDatabase } from '../db/schema.ts'
import { bucketEdges, bucketStart } from '../domain/buckets.ts'
import { DEFAULT_TAGS } from '../domain/tags.ts'
import { METER_BUCKET_MEAN } from './measurements.ts'
import { METER_QUARTER_HIGH, METER_QUARTER_LOW, METER_QUARTER_VALUE } from './meter-value.ts'
import { type RollupLevel, servingLevel } from './rollups.ts'

type Db = Kysely<EnergyDatabase>
type Column<G extends GroupName> = GroupColumn<G>

const table = (group: GroupName) => sql.table(`${group}_15m`)
const ts = (instant: number) => new Date(instant).toISOString()

/** Newest quarter hour present in a group's table, or undefined when it is empty. */
export async function latestQuarter(db: Db, group: GroupName): Promise<number | undefined> {
  const { rows } = await sql<{ latest: Date | null }>`select max(time_15m) as latest from ${table(group)}`.execute(db)
  return rows[0]?.latest?.getTime() ?? undefined
}

/** Newest quarter hour present in any of the groups' tables. */
export async function latestQuarterOf(db: Db, groups: readonly GroupName[]): Promise<number | undefined> {
  const latest = await Promise.all(groups.map((g) => latestQuarter(db, g)))
  const present = latest.filter((t): t is number => t !== undefined)
  return present.length ? Math.max(...present) : undefined
}

/** Whether any of the groups' tables holds a quarter hour in `[from, to)`. */
export async function holdsData(db: Db, groups: readonly GroupName[], from: number, to: number): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`select ${sql.join(
    groups.map((g) => sql`exists (select 1 from ${table(g)} where time_15m >= ${ts(from)} and time_15m < ${ts(to)})`),
    sql` or `,
  )} as found`.execute(db)
  return rows[0]?.found ?? false
}

/** Newest quarter hour of one meter in the per-meter table. */
export async function latestMeterQuarter(db: Db, meterId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('data_15m')
    .select((eb) => eb.fn.max('time_15m').as('latest'))
    .where('meter_id', '=', meterId)
    .executeTakeFirst()
  const latest = row?.latest as Date | null | undefined
  return latest ? latest.getTime() : undefined
}

type SeriesRow<C extends string> = { time: number } & Record<C, number | null>

/** Rows of a group with `from < time_15m <= to`, oldest first (a chart window, 15-minute detail). */
export async function seriesRows<G extends GroupName, C extends Column<G>>(
  db: Db,
  group: G,
  columns: readonly C[],
  from: number,
  to: number,
): Promise<Array<SeriesRow<C>>> {
  const { rows } = await sql<Record<string, unknown>>`
    select time_15m, ${sql.join(columns.map((c) => sql.ref(c)))}
    from ${table(group)}
    where time_15m > ${ts(from)} and time_15m <= ${ts(to)}
    order by time_15m`.execute(db)
  return rows.map((row) => {
    const out: Record<string, unknown> = { time: (row.time_15m as Date).getTime() }
    for (const c of columns) out[c] = row[c] ?? null
    return out as SeriesRow<C>
  })
}

export interface DailyTotals<C extends string> {
  /** Local day `YYYY-MM-DD`. */
  day: string
  quarters: number
  sums: Record<C, number | null>
  /** Quarter hours holding a value, per column. */
  counts: Record<C, number>
}

/**
 * Per local day (in `zone`), the sum of each column over `from <= time_15m < to`. Days without rows
 * are absent. Read from the rollups when they serve the days (`servingLevel`: the calendar zone's
 * days, or hours in a zone of whole-hour offsets) and both bounds are local midnights; else, or on
 * `quarterScan`, from the quarter hours.
 */
export async function dailyTotals<G extends GroupName, C extends Column<G>>(
  db: Db,
  group: G,
  columns: readonly C[],
  from: number,
  to: number,
  zone: string,
  options: { quarterScan?: boolean } = {},
): Promise<Array<DailyTotals<C>>> {
  const level = options.quarterScan ? undefined : await dayLevel(db, zone, from, to)
  // the same query over either source: a rollup row holds its quarter hours' count and sums
  const source = level
    ? {
        rows: sql`${sql.table(`${group}_rollup`)} where level = ${level} and start >= ${ts(from)} and start < ${ts(to)}`,
        time: sql.ref('start'),
        quarters: sql`sum(quarters)`,
        sum: (c: string) => sql`sum(${sql.ref(`${c}_sum`)})`,
        count: (c: string) => sql`sum(${sql.ref(`${c}_n`)})`,
      }
    : {
        rows: sql`${table(group)} where time_15m >= ${ts(from)} and time_15m < ${ts(to)}`,
        time: sql.ref('time_15m'),
        quarters: sql`count(*)`,
        sum: (c: string) => sql`sum(${sql.ref(c)})`,
        count: (c: string) => sql`count(${sql.ref(c)})`,
      }
  const { rows } = await sql<Record<string, unknown>>`
    select to_char(${source.time} at time zone ${zone}, 'YYYY-MM-DD') as day, ${source.quarters} as quarters,
      ${sql.join(columns.map((c) => sql`${source.sum(c)} as ${sql.ref(c)}`))},
      ${sql.join(columns.map((c, i) => sql`${source.count(c)} as ${sql.ref(`n${i}`)}`))}
    from ${source.rows}
    group by 1
    order by 1`.execute(db)
  return rows.map((row) => ({
    day: row.day as string,
    quarters: Number(row.quarters),
    sums: Object.fromEntries(columns.map((c) => [c, (row[c] as number | null) ?? null])) as Record<C, number | null>,
    counts: Object.fromEntries(columns.map((c, i) => [c, Number(row[`n${i}`])])) as Record<C, number>,
  }))
}

/** The rollup level that holds whole local days of `zone` from `from` to `to`, if any. */
async function dayLevel(db: Db, zone: string, from: number, to: number): Promise<RollupLevel | undefined> {
  if (!(from < to) || bucketStart('1 d', zone, from) !== from || bucketStart('1 d', zone, to) !== to) return undefined
  return servingLevel(db, '1 d', zone, bucketEdges('1 d', zone, from, to))
}

export interface ColumnSummary {
  /** Quarter hours with a value. */
  count: number
  sum: number | null
  mean: number | null
  min: number | null
  max: number | null
  /** First quarter hour holding the maximum. */
  maxAt: number | null
  /** Mean of the quarter hours between 02:00 and 04:00 local time (the night baseline). */
  nightMean: number | null
}

function summaryColumns(column: string, zone: string): RawBuilder<unknown> {
  const c = sql.ref(column)
  const local = sql`(time_15m at time zone ${zone})`
  return sql.join([
    sql`count(${c}) as ${sql.ref(`${column}__count`)}`,
    sql`sum(${c}) as ${sql.ref(`${column}__sum`)}`,
    sql`avg(${c}) as ${sql.ref(`${column}__mean`)}`,
    sql`min(${c}) as ${sql.ref(`${column}__min`)}`,
    sql`max(${c}) as ${sql.ref(`${column}__max`)}`,
    sql`(array_agg(time_15m order by ${c} desc, time_15m) filter (where ${c} is not null))[1] as ${sql.ref(`${column}__max_at`)}`,
    sql`avg(${c}) filter (where extract(hour from ${local}) in (2, 3)) as ${sql.ref(`${column}__night`)}`,
  ])
}

/** Count, sum, mean, min, max (and when), night baseline of each column over `from <= time_15m < to`. */
export async function columnSummaries<G extends GroupName, C extends Column<G>>(
  db: Db,
  group: G,
  columns: readonly C[],
  from: number,
  to: number,
  zone: string,
): Promise<{ quarters: number; columns: Record<C, ColumnSummary> }> {
  const { rows } = await sql<Record<string, unknown>>`
    select count(*) as quarters, ${sql.join(columns.map((c) => summaryColumns(c, zone)))}
    from ${table(group)}
    where time_15m >= ${ts(from)} and time_15m < ${ts(to)}`.execute(db)
  const row = rows[0] ?? {}
  const num = (key: string) => (row[key] as number | null | undefined) ?? null
  const summaries = {} as Record<C, ColumnSummary>
  for (const c of columns) {
    const maxAt = row[`${c}__max_at`] as Date | null | undefined
    summaries[c] = {
      count: Number(row[`${c}__count`] ?? 0),
      sum: num(`${c}__sum`),
      mean: num(`${c}__mean`),
      min: num(`${c}__min`),
      max: num(`${c}__max`),
      maxAt: maxAt ? maxAt.getTime() : null,
      nightMean: num(`${c}__night`),
    }
  }
  return { quarters: Number(row.quarters ?? 0), columns: summaries }
}

export interface BalanceTotals {
  quarters: number
  production: number | null
  consumption: number | null
  selfConsumed: number | null
  surplus: number | null
  gridWithdrawal: number | null
}

/**
 * Energy balance of the Aule P building over `from <= time_15m < to`, quarter hour by quarter
 * hour: PV used on site is min(production, consumption), the rest of the production is surplus,
 * the rest of the consumption comes from the grid. Quarters missing either value are left out.
 */
export async function aulepBalance(db: Db, from: number, to: number): Promise<BalanceTotals> {
  const row = await db
    .selectFrom('aulep_15m')
    .select([
      sql<number>`count(*)`.as('quarters'),
      sql<number | null>`sum(tot_pv_prod)`.as('production'),
      sql<number | null>`sum(consumo_aula_1p)`.as('consumption'),
      sql<number | null>`sum(least(tot_pv_prod, consumo_aula_1p))`.as('selfConsumed'),
      sql<number | null>`sum(greatest(tot_pv_prod - consumo_aula_1p, 0))`.as('surplus'),
      sql<number | null>`sum(greatest(consumo_aula_1p - tot_pv_prod, 0))`.as('gridWithdrawal'),
    ])
    .where('time_15m', '>=', new Date(from))
    .where('time_15m', '<', new Date(to))
    .where('tot_pv_prod', 'is not', null)
    .where('consumo_aula_1p', 'is not', null)
    .executeTakeFirstOrThrow()
  return { ...row, quarters: Number(row.quarters) }
}

export interface MeterStats {
  /** Quarter hours stored, whatever their tag. */
  stored: number
  /** Quarter hours of the default tags: the ones the statistics count. */
  quarters: number
  samples: number | null
  mean: number | null
  min: number | null
  minAt: number | null
  max: number | null
  maxAt: number | null
  /** Sum of the quarter-hour values (`METER_QUARTER_VALUE`). */
  total: number | null
  /** Longest distance between two consecutive quarter hours present, in milliseconds. */
  longestStep: number | null
  tags: Record<string, number>
}

export interface MeterDay {
  day: string
  quarters: number
  /** Mean of the quarter-hour values (`METER_QUARTER_VALUE`). */
  mean: number | null
  min: number | null
  max: number | null
  /** Sum of the quarter-hour values (`METER_QUARTER_VALUE`). */
  total: number | null
}

/**
 * Statistics of one meter's quarter hours of the default tags (`DEFAULT_TAGS`, as `/data/meters`)
 * over `from <= time_15m < to`; `tags` counts every tag's quarter hours, counted or not.
 */
export async function meterStats(db: Db, meterId: number, from: number, to: number): Promise<MeterStats> {
  // the statistics count the default tags; the coverage figures (stored, samples, longest gap) every row
  const { rows } = await sql<Record<string, unknown>>`
    select count(*) as stored,
      sum(count_value) as samples,
      count(*) filter (where counted) as quarters,
      ${sql.raw(METER_BUCKET_MEAN)} filter (where counted) as mean,
      min(low) filter (where counted) as min,
      (array_agg(time_15m order by low, time_15m) filter (where counted and low is not null))[1] as min_at,
      max(high) filter (where counted) as max,
      (array_agg(time_15m order by high desc, time_15m) filter (where counted and high is not null))[1] as max_at,
      sum(${sql.raw(METER_QUARTER_VALUE)}) filter (where counted) as total,
      extract(epoch from max(step)) * 1000 as longest_step
    from (
      select *, time_15m - lag(time_15m) over (order by time_15m) as step, tag = any(${[...DEFAULT_TAGS]}) as counted,
        ${sql.raw(METER_QUARTER_LOW)} as low, ${sql.raw(METER_QUARTER_HIGH)} as high
      from data_15m
      where meter_id = ${meterId} and time_15m >= ${ts(from)} and time_15m < ${ts(to)}
    ) d`.execute(db)
  const tags = await db
    .selectFrom('data_15m')
    .select(['tag', sql<number>`count(*)`.as('quarters')])
    .where('meter_id', '=', meterId)
    .where('time_15m', '>=', new Date(from))
    .where('time_15m', '<', new Date(to))
    .groupBy('tag')
    .orderBy('tag')
    .execute()
  const row = rows[0] ?? {}
  const num = (key: string) => (row[key] === null || row[key] === undefined ? null : Number(row[key]))
  return {
    stored: Number(row.stored ?? 0),
    quarters: Number(row.quarters ?? 0),
    samples: num('samples'),
    mean: num('mean'),
    min: num('min'),
    minAt: row.min_at ? (row.min_at as Date).getTime() : null,
    max: num('max'),
    maxAt: row.max_at ? (row.max_at as Date).getTime() : null,
    total: num('total'),
    longestStep: num('longest_step'),
    tags: Object.fromEntries(tags.map((t) => [t.tag, Number(t.quarters)])),
  }
}

/** One meter's statistics per local day in `zone`. */
export async function meterDays(db: Db, meterId: number, from: number, to: number, zone: string): Promise<MeterDay[]> {
  const { rows } = await sql<Record<string, unknown>>`
    select to_char(time_15m at time zone ${zone}, 'YYYY-MM-DD') as day, count(*) as quarters,
      ${sql.raw(METER_BUCKET_MEAN)} as mean, min(${sql.raw(METER_QUARTER_LOW)}) as min, max(${sql.raw(METER_QUARTER_HIGH)}) as max,
      sum(${sql.raw(METER_QUARTER_VALUE)}) as total
    from data_15m
    where meter_id = ${meterId} and time_15m >= ${ts(from)} and time_15m < ${ts(to)} and tag = any(${[...DEFAULT_TAGS]})
    group by 1
    order by 1`.execute(db)
  return rows.map((r) => ({
    day: r.day as string,
    quarters: Number(r.quarters),
    mean: (r.mean as number | null) ?? null,
    min: (r.min as number | null) ?? null,
    max: (r.max as number | null) ?? null,
    total: (r.total as number | null) ?? null,
  }))
}

export interface ScheduleCell<C extends string> {
  month: number
  weekend: boolean
  hour: number
  quarters: number
  /** Per column: sum of values, quarters with a value, quarters "running" (above the threshold). */
  sums: Record<C, number | null>
  counts: Record<C, number>
  running: Record<C, number>
}

/**
 * A year of a group folded into (local month, weekday/weekend, local hour) cells, in the
 * database: at most 12 x 2 x 24 rows come back. A column counts as running in a quarter hour
 * when its value exceeds `runningShare` of its own peak over the range.
 */
export async function scheduleCells<G extends GroupName, C extends Column<G>>(
  db: Db,
  group: G,
  columns: readonly C[],
  from: number,
  to: number,
  zone: string,
  runningShare: number,
): Promise<Array<ScheduleCell<C>>> {
  const peak = (c: string) => sql.ref(`peaks.${c}`)
  const { rows } = await sql<Record<string, unknown>>`
    with peaks as (
      select ${sql.join(columns.map((c) => sql`max(${sql.ref(c)}) as ${sql.ref(c)}`))}
      from ${table(group)}
      where time_15m >= ${ts(from)} and time_15m < ${ts(to)}
    ), local_rows as (
      select time_15m at time zone ${zone} as local_time, ${sql.join(columns.map((c) => sql.ref(c)))}
      from ${table(group)}
      where time_15m >= ${ts(from)} and time_15m < ${ts(to)}
    )
    select extract(month from local_time)::int as month,
      extract(isodow from local_time) >= 6 as weekend,
      extract(hour from local_time)::int as hour,
      count(*) as quarters,
      ${sql.join(
        columns.map(
          (c) => sql`sum(local_rows.${sql.ref(c)}) as ${sql.ref(`${c}__sum`)},
            count(local_rows.${sql.ref(c)}) as ${sql.ref(`${c}__count`)},
            count(*) filter (where local_rows.${sql.ref(c)} > ${peak(c)} * ${runningShare}) as ${sql.ref(`${c}__running`)}`,
        ),
      )}
    from local_rows cross join peaks
    group by 1, 2, 3
    order by 1, 2, 3`.execute(db)
  return rows.map((r) => ({
    month: Number(r.month),
    weekend: Boolean(r.weekend),
    hour: Number(r.hour),
    quarters: Number(r.quarters),
    sums: Object.fromEntries(columns.map((c) => [c, (r[`${c}__sum`] as number | null) ?? null])) as Record<
      C,
      number | null
    >,
    counts: Object.fromEntries(columns.map((c) => [c, Number(r[`${c}__count`])])) as Record<C, number>,
    running: Object.fromEntries(columns.map((c) => [c, Number(r[`${c}__running`])])) as Record<C, number>,
  }))
}
