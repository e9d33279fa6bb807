/**
 * What each kind of rule finds true at an instant: one observation per subject (a datalogger, a
 * meter) whose condition holds. A subject without one is, for the evaluation, no longer active.
 */
import type pg from 'pg'
import { AMOUNT_METER_IDS } from '../catalogue/meters.ts'
import { QUARTER_MS } from '../domain/time.ts'
import type { Rule } from './rules.ts'

export interface Observation {
  /** What one alert of the rule is about: `datalogger:<id>` or `meter:<id>`. */
  subject: string
  labels: Record<string, string>
  value: number | null
  summary: string
}

type Queryable = Pick<pg.PoolClient, 'query'>

/** Hours of local time that make a night (from midnight): the base load, with nobody in. */
const NIGHT_HOURS = 6
/** Nights the median of a night-baseline rule needs at least before it judges one. */
const MIN_BASELINE_NIGHTS = 7

/** A meter's quarter-hour value: the amount of an energy or volume meter, else the mean. */
const quarterValue = (meter: number) => (AMOUNT_METER_IDS.includes(meter) ? 'sum_value' : 'avg_value')

const minutesAgo = (ms: number) => `${Math.round(ms / 60_000)} min`

async function stale(db: Queryable, rule: Rule, now: number): Promise<Observation[]> {
  const minutes = rule.params.minutes ?? 0
  const byDatalogger = rule.datalogger !== null
  const { rows } = await db.query<{ last: Date | null }>(
    byDatalogger
      ? `select max(l.received_at) as last from meters m left join meter_latest l on l.meter_id = m.id
         where m.datalogger_id = $1`
      : 'select (select received_at from meter_latest where meter_id = $1) as last',
    [byDatalogger ? rule.datalogger : rule.meter],
  )
  const last = rows[0]?.last?.getTime()
  const age = last === undefined ? undefined : now - last
  if (age !== undefined && age <= minutes * 60_000) return []
  const what = byDatalogger ? `datalogger ${rule.datalogger}` : `meter ${rule.meter}`
  return [
    {
      subject: byDatalogger ? `datalogger:${rule.datalogger}` : `meter:${rule.meter}`,
      labels: byDatalogger ? { datalogger: String(rule.datalogger) } : { meter: String(rule.meter) },
      value: age === undefined ? null : age / 1000,
      summary:
        age === undefined
          ? `${what} has sent no sample`
          : `${what} has sent no sample for ${minutesAgo(age)} (limit ${minutes} min)`,
    },
  ]
}

async function threshold(db: Queryable, rule: Rule, now: number): Promise<Observation[]> {
  const meter = rule.meter as number
  const quarters = rule.params.quarters ?? 1
  // the newest complete quarter hour starts one quarter before the current one
  const last = Math.floor(now / QUARTER_MS) * QUARTER_MS - QUARTER_MS
  const first = last - (quarters - 1) * QUARTER_MS
  const { rows } = await db.query<{ value: number | null }>(
    `select ${quarterValue(meter)} as value from data_15m
     where meter_id = $1 and time_15m >= $2 and time_15m <= $3 order by time_15m`,
    [meter, new Date(first), new Date(last)],
  )
  const above = rule.params.above
  const level = above ?? (rule.params.below as number)
  const past = (v: number | null) => v !== null && (above !== undefined ? v > level : v < level)
  if (rows.length < quarters || !rows.every((r) => past(r.value))) return []
  const value = rows[rows.length - 1]?.value ?? null
  return [
    {
      subject: `meter:${meter}`,
      labels: { meter: String(meter) },
      value,
      summary: `meter ${meter}: ${quarters} quarter hour(s) ${above !== undefined ? 'above' : 'below'} ${level} (last ${value})`,
    },
  ]
}

async function nightBaseline(db: Queryable, rule: Rule, now: number, zone: string): Promise<Observation[]> {
  const meter = rule.meter as number
  const { rows } = await db.query<{ last: number | null; median: number | null; nights: number }>(
    `with bounds as (
       select case when extract(hour from $2::timestamptz at time zone $3) >= ${NIGHT_HOURS}
         then ($2::timestamptz at time zone $3)::date else ($2::timestamptz at time zone $3)::date - 1 end as last_night
     ), nights as (
       select (d.time_15m at time zone $3)::date as night, sum(d.${quarterValue(meter)}) as amount
       from data_15m d, bounds b
       where d.meter_id = $1
         and d.time_15m >= ((b.last_night - 28)::timestamp at time zone $3)
         and d.time_15m < ((b.last_night::timestamp + interval '${NIGHT_HOURS} hours') at time zone $3)
         and extract(hour from d.time_15m at time zone $3) < ${NIGHT_HOURS}
       group by 1
     )
     select (select amount from nights, bounds where night = last_night) as last,
       (select percentile_cont(0.5) within group (order by amount) from nights, bounds where night < last_night) as median,
       (select count(*)::int from nights, bounds where night < last_night) as nights`,
    [meter, new Date(now), zone],
  )
  const row = rows[0]
  if (!row || row.last === null || row.median === null || row.nights < MIN_BASELINE_NIGHTS) return []
  const percent = rule.params.percent ?? 0
  if (!(row.last > row.median * (1 + percent / 100))) return []
  const over = row.median === 0 ? Number.POSITIVE_INFINITY : (row.last / row.median - 1) * 100
  return [
    {
      subject: `meter:${meter}`,
      labels: { meter: String(meter) },
      value: row.last,
      summary: `meter ${meter}: last night ${row.last.toFixed(2)}, ${over.toFixed(0)}% over the median of ${row.nights} nights (${row.median.toFixed(2)}; limit ${percent}%)`,
    },
  ]
}

async function quarantine(db: Queryable, rule: Rule, now: number): Promise<Observation[]> {
  const minutes = rule.params.minutes ?? 0
  const count = rule.params.count ?? 0
  const { rows } = await db.query<{ datalogger: string; n: number }>(
    `select coalesce(p.datalogger, p.source) as datalogger, count(*)::int as n
     from quarantine q join quarantine_payloads p on p.id = q.payload_id
     where q.received_at > $1 and ($2::text is null or p.datalogger = $2)
     group by 1 having count(*) > $3`,
    [new Date(now - minutes * 60_000), rule.datalogger, count],
  )
  return rows.map((r) => ({
    subject: `datalogger:${r.datalogger}`,
    labels: { datalogger: r.datalogger },
    value: r.n,
    summary: `datalogger ${r.datalogger}: ${r.n} quarantined record(s) in ${minutes} min (limit ${count})`,
  }))
}

/** What `rule` finds at `now` (local nights in `zone`). */
export function observe(db: Queryable, rule: Rule, now: number, zone: string): Promise<Observation[]> {
  switch (rule.kind) {
    case 'stale':
      return stale(db, rule, now)
    case 'threshold':
      return threshold(db, rule, now)
    case 'night-baseline':
      return nightBaseline(db, rule, now, zone)
    case 'quarantine':
      return quarantine(db, rule, now)
    default:
      return Promise.resolve([])
  }
}
