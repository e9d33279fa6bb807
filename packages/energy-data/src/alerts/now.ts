/**
 * The dashboard's "Now" panel: each datalogger's last sample and its age, the main meters'
 * latest reading and today's amount so far, the alerts firing. Built after each tick of the
 * alert engine and pushed to the open pages (server-sent events).
 */
import type pg from 'pg'
import Type, { type Static } from 'typebox'
import { AMOUNT_METER_IDS, CAMPUS_METERS } from '../catalogue/meters.ts'
import { ACCUMULATES_TO, conversionFactor, type UnitId, unitSymbol } from '../catalogue/quantities.ts'
import { served } from '../domain/served.ts'
import type { AlertRow } from './evaluate.ts'

/** A datalogger is live when its newest sample arrived within this, late within STALE_S, else stale. */
export const LIVE_S = 120
export const STALE_S = 900

const Instant = Type.Union([Type.String({ format: 'date-time' }), Type.Null()])

export const NowSnapshot = Type.Object({
  at: Type.String({ format: 'date-time' }),
  dataloggers: Type.Array(
    Type.Object({
      id: Type.String(),
      description: Type.Union([Type.String(), Type.Null()]),
      last_sample_at: Instant,
      age_seconds: Type.Union([Type.Number(), Type.Null()]),
      status: Type.Enum(['live', 'late', 'stale'], { type: 'string' }),
    }),
  ),
  meters: Type.Array(
    Type.Object({
      id: Type.Integer(),
      description: Type.String(),
      unit: Type.String(),
      reading: Type.Union([Type.Number(), Type.Null()], {
        description:
          'The register when the datalogger sends one; else, for an energy or volume meter, the rate of its newest ' +
          'increment (kW, m³/h); else the newest sample',
      }),
      reading_unit: Type.String(),
      reading_at: Instant,
      today: Type.Union([Type.Number(), Type.Null()], { description: "Today's amount so far (local day)" }),
    }),
  ),
  alerts: Type.Array(
    Type.Object({
      rule: Type.String(),
      severity: Type.String(),
      summary: Type.String(),
      fired_at: Instant,
    }),
  ),
})
export type NowSnapshot = Static<typeof NowSnapshot>

/** The rate an amount accumulates from (kWh: kW), by the amount's unit. */
const RATE_OF = new Map(Object.entries(ACCUMULATES_TO).map(([rate, amount]) => [amount, rate as UnitId]))

/**
 * What a main meter reads now: its register when its datalogger sends one; else, for an energy or
 * volume meter, the rate of its newest increment over the time since the one before (kW, m³/h);
 * else the newest sample.
 */
function currentReading(m: {
  id: number
  unit_id: string | null
  register: number | null
  register_at: Date | null
  value: number | null
  at: Date | null
  seconds: number | null
}): { reading: number | null; reading_unit: string; reading_at: string | null } {
  const unit = unitSymbol(m.unit_id)
  if (m.register !== null)
    return { reading: m.register, reading_unit: unit, reading_at: m.register_at?.toISOString() ?? null }
  const rate = m.unit_id ? RATE_OF.get(m.unit_id as UnitId) : undefined
  if (AMOUNT_METER_IDS.includes(m.id) && rate && m.value !== null && m.seconds !== null && m.seconds > 0) {
    return {
      reading: served(m.value * conversionFactor(m.unit_id as UnitId, rate, m.seconds)),
      reading_unit: unitSymbol(rate),
      reading_at: m.at?.toISOString() ?? null,
    }
  }
  return { reading: m.value, reading_unit: unit, reading_at: m.at?.toISOString() ?? null }
}

export function dataloggerStatus(ageSeconds: number | null): 'live' | 'late' | 'stale' {
  if (ageSeconds === null || ageSeconds > STALE_S) return 'stale'
  return ageSeconds > LIVE_S ? 'late' : 'live'
}

export async function nowSnapshot(
  pool: Pick<pg.Pool, 'query'>,
  options: { now: number; zone: string; open: readonly AlertRow[] },
): Promise<NowSnapshot> {
  const at = new Date(options.now)
  const [dataloggers, meters] = await Promise.all([
    pool.query<{ id: string; description: string | null; last: Date | null }>(
      `select d.id, d.description, max(l.received_at) as last
       from dataloggers d left join meters m on m.datalogger_id = d.id left join meter_latest l on l.meter_id = m.id
       -- a datalogger taken out of service is expected to be silent
       where d.date_to is null or d.date_to > $1
       group by d.id, d.description order by d.id`,
      [at],
    ),
    pool.query<{
      id: number
      description: string
      unit_id: string | null
      register: number | null
      register_at: Date | null
      value: number | null
      at: Date | null
      seconds: number | null
      today: number | null
    }>(
      `select m.id, m.description, m.unit_id, l.register_value as register, l.register_at, l.value, l.at,
         -- an increment covers the time since the sample before it: the pair gives the rate
         (select extract(epoch from x.at - x.before)::float8 from (
            select s.at, lag(s.at) over (order by s.at) as before from (
              select at from meter_samples where meter_id = m.id and reading = 'value' order by at desc limit 2
            ) s
          ) x order by x.at desc limit 1) as seconds,
         (select sum(d.sum_value) from data_15m d
          where d.meter_id = m.id
            and d.time_15m >= (date_trunc('day', $2::timestamptz at time zone $3) at time zone $3)
            and d.time_15m < $2::timestamptz) as today
       from meters m left join meter_latest l on l.meter_id = m.id
       where m.id = any($1::int[]) order by m.id`,
      [CAMPUS_METERS, at, options.zone],
    ),
  ])
  return {
    at: at.toISOString(),
    dataloggers: dataloggers.rows.map((d) => {
      const age = d.last === null ? null : Math.max(0, Math.round((options.now - d.last.getTime()) / 1000))
      return {
        id: d.id,
        description: d.description,
        last_sample_at: d.last?.toISOString() ?? null,
        age_seconds: age,
        status: dataloggerStatus(age),
      }
    }),
    meters: meters.rows.map((m) => ({
      id: m.id,
      description: m.description.replace(/^\d+\)\s*/, ''),
      unit: unitSymbol(m.unit_id),
      ...currentReading(m),
      today: m.today === null ? null : served(m.today),
    })),
    alerts: options.open
      .filter((a) => a.state === 'firing')
      .map((a) => ({
        rule: a.rule_name,
        severity: a.labels.severity ?? 'warning',
        summary: a.summary,
        fired_at: a.fired_at?.toISOString() ?? null,
      })),
  }
}
