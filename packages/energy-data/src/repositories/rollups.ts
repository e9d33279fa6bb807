import { Kysely, sql } from 'kysely'
import type pg from 'pg'
import { GROUP_COLUMNS, GROUP_NAMES, type GroupName } from '../catalogue/groups.ts'
import type { EnergyDatabase } from '../db/schema.ts'
import { AGGREGATIONS, type Aggregation } from '../domain/aggregation.ts'
import { bucketEdges, bucketStart, nextBucket } from '../domain/buckets.ts'
import { HOUR_MS } from '../domain/time.ts'
import { METER_QUARTER_VALUE } from './meter-value.ts'
import { inTransaction } from './transaction.ts'

/**
 * The rollups of the 15-minute tables (`<table>_rollup`, migration 0005): `hour` rows for UTC
 * hours, `day` and `month` rows for the local days and months of the calendar zone (the service's
 * ENERGY_TIMEZONE, in `rollup_calendar`). Each level is recomputed from the level below (or the
 * quarter hours) over the periods a write touched, so it never disagrees with its rows.
 */
export type RollupLevel = 'hour' | 'day' | 'month'

/** The level a bucket of `aggregation` is read from, and the quarter hours one of its rows spans at most. */
export const LEVEL_OF: Record<RollupLevel, { aggregation: Aggregation; quarters: number }> = {
  hour: { aggregation: '1 h', quarters: 4 },
  day: { aggregation: '1 d', quarters: 100 },
  month: { aggregation: '1 mon', quarters: 2976 },
}

// one number for the lock every rollup refresh takes; arbitrary, distinct from the migrator's
export const ROLLUP_LOCK = 727_274_015

const HOUR_OF = "date_bin('1 hour', time_15m, timestamptz '2000-01-01 00:00:00+00')"

interface Combine {
  /** Rollup columns, in insert order after `level, start`. */
  columns: string
  /** Their values from the quarter hours, given the period expression. */
  fromQuarters: string
  /** Their values from rollup rows of a finer level. */
  fromRollups: string
  /** Key columns after the period (`meter_id, tag`), or none. */
  keys: string[]
}

function combineOf(table: string): { rollup: string; combine: Combine } {
  if (table === 'data_15m') {
    return {
      rollup: 'data_rollup',
      combine: {
        columns: 'meter_id, tag, quarters, values_n, avg_sum, min_value, max_value, sum_value, count_value',
        fromQuarters: `meter_id, tag, count(*), count(${METER_QUARTER_VALUE}), sum(${METER_QUARTER_VALUE}), min(min_value), max(max_value), sum(sum_value), sum(count_value)`,
        fromRollups:
          'meter_id, tag, sum(quarters), sum(values_n), sum(avg_sum), min(min_value), max(max_value), sum(sum_value), sum(count_value)',
        keys: ['meter_id', 'tag'],
      },
    }
  }
  const group = GROUP_NAMES.find((g) => `${g}_15m` === table)
  if (!group) throw new Error(`${table} is not a 15-minute table`)
  const columns = GROUP_COLUMNS[group as GroupName]
  return {
    rollup: `${group}_rollup`,
    combine: {
      columns: `quarters, ${columns.map((c) => `${c}_n, ${c}_sum`).join(', ')}`,
      fromQuarters: `count(*), ${columns.map((c) => `count(${c}), sum(${c})`).join(', ')}`,
      fromRollups: `sum(quarters), ${columns.map((c) => `sum(${c}_n), sum(${c}_sum)`).join(', ')}`,
      keys: [],
    },
  }
}

/** The finer level a level is made of. */
const MADE_OF: Record<RollupLevel, RollupLevel | undefined> = { hour: undefined, day: 'hour', month: 'day' }

/**
 * Recomputes `level` of `table`'s rollup over the periods holding `[fromMs, toMs)`: hours are
 * UTC hours, days and months those of `zone`. The level below must be current over them.
 */
async function refresh(
  client: pg.PoolClient,
  table: string,
  level: RollupLevel,
  fromMs: number,
  toMs: number,
  zone: string,
): Promise<void> {
  const { rollup, combine } = combineOf(table)
  const aggregation = LEVEL_OF[level].aggregation
  const lo = bucketStart(aggregation, zone, fromMs)
  const hi = nextBucket(aggregation, zone, bucketStart(aggregation, zone, toMs - 1))
  const keys = combine.keys.map((k) => `, ${k}`).join('')
  await client.query(`delete from ${rollup} where level = $1 and start >= $2 and start < $3`, [
    level,
    new Date(lo),
    new Date(hi),
  ])
  const insert = `insert into ${rollup} (level, start, ${combine.columns})`
  if (level === 'hour') {
    await client.query(
      `${insert} select 'hour', ${HOUR_OF}, ${combine.fromQuarters} from ${table}
       where time_15m >= $1 and time_15m < $2 group by ${HOUR_OF}${keys}`,
      [new Date(lo), new Date(hi)],
    )
    return
  }
  const edges = bucketEdges(aggregation, zone, lo, hi).map((e) => new Date(e))
  const finer = MADE_OF[level] as RollupLevel
  // a period of whole hours is made of the finer rollups; one that is not (+05:30) of the quarter hours
  const aligned = edges.every((e) => e.getTime() % HOUR_MS === 0)
  const period = (time: string) => `($3::timestamptz[])[width_bucket(${time}, $3::timestamptz[])]`
  if (aligned) {
    await client.query(
      `${insert} select $4, ${period('start')}, ${combine.fromRollups} from ${rollup}
       where level = $5 and start >= $1 and start < $2 group by 2${keys}`,
      [new Date(lo), new Date(hi), edges, level, finer],
    )
  } else {
    await client.query(
      `${insert} select $4, ${period('time_15m')}, ${combine.fromQuarters} from ${table}
       where time_15m >= $1 and time_15m < $2 group by 2${keys}`,
      [new Date(lo), new Date(hi), edges, level],
    )
  }
}

/**
 * Recomputes the rows of `level` of the meters' periods `keys` (each `[start, end)` a whole period
 * of that level) from the level below, every tag of them: a meter's period whose rows a delta could
 * not keep exact (rollup-deltas.ts). Under the meter's lock, in the writer's transaction.
 */
export async function recomputeMeterRollups(
  client: pg.PoolClient,
  level: RollupLevel,
  keys: ReadonlyArray<{ meterId: number; start: number; end: number }>,
): Promise<void> {
  const { combine } = combineOf('data_15m')
  const params = [
    level,
    keys.map((k) => k.meterId),
    keys.map((k) => new Date(k.start)),
    keys.map((k) => new Date(k.end)),
  ]
  await client.query(
    `delete from data_rollup r using unnest($2::int[], $3::timestamptz[]) as k(meter, first)
     where r.level = $1 and r.meter_id = k.meter and r.start = k.first`,
    params.slice(0, 3),
  )
  const keysTable = 'unnest($2::int[], $3::timestamptz[], $4::timestamptz[]) as k(meter, first, finish)'
  const insert = `insert into data_rollup (level, start, ${combine.columns})`
  const aligned = level !== 'hour' && keys.every((k) => k.start % HOUR_MS === 0 && k.end % HOUR_MS === 0)
  if (aligned) {
    await client.query(
      `${insert} select $1, k.first, ${combine.fromRollups} from ${keysTable}
       join data_rollup on level = $5 and meter_id = k.meter and start >= k.first and start < k.finish
       group by k.first, meter_id, tag`,
      [...params, MADE_OF[level]],
    )
    return
  }
  await client.query(
    `${insert} select $1, k.first, ${combine.fromQuarters} from ${keysTable}
     join data_15m on meter_id = k.meter and time_15m >= k.first and time_15m < k.finish
     group by k.first, meter_id, tag`,
    params,
  )
}

/** The zone of the day and month levels, or undefined before the service has built them. */
export async function calendarZone(
  client: pg.PoolClient | pg.Pool | Kysely<EnergyDatabase>,
): Promise<string | undefined> {
  const query = 'select zone from rollup_calendar'
  const result =
    client instanceof Kysely
      ? await sql.raw<{ zone: string }>(query).execute(client)
      : await client.query<{ zone: string }>(query)
  return result.rows[0]?.zone
}

/**
 * The rollup level that serves buckets of `aggregation` whose edges are `edges` in `zone`: the
 * calendar zone's days or months, else hours when every edge lies on a UTC hour (a zone whose
 * offset is a whole number of hours); else none, and the quarter hours answer.
 */
export async function servingLevel(
  client: pg.Pool | Kysely<EnergyDatabase>,
  aggregation: Aggregation,
  zone: string,
  edges: readonly number[],
): Promise<RollupLevel | undefined> {
  const a = AGGREGATIONS[aggregation]
  if (a.kind === 'calendar' && (await calendarZone(client)) === zone) return a.unit === 'month' ? 'month' : 'day'
  return edges.every((e) => e % HOUR_MS === 0) ? 'hour' : undefined
}

/** Every rollup level of `table` over `[fromMs, toMs)`, in the writer's transaction, under the rollup lock. */
export async function refreshRollups(
  client: pg.PoolClient,
  table: string,
  fromMs: number,
  toMs: number,
  zone: string | undefined,
): Promise<void> {
  await refresh(client, table, 'hour', fromMs, toMs, 'UTC')
  if (zone === undefined) return
  await refresh(client, table, 'day', fromMs, toMs, zone)
  await refresh(client, table, 'month', fromMs, toMs, zone)
}

export const ROLLED_UP_TABLES = ['data_15m', ...GROUP_NAMES.map((g) => `${g}_15m`)]

/**
 * Days and months of `zone` for everything stored, when they are not already cut in that zone
 * (the first start, or ENERGY_TIMEZONE changed): one transaction under the rollup lock, so a
 * writer meanwhile waits and then keeps them. `onProgress` hears each table as it is done.
 */
export async function buildCalendar(
  pool: pg.Pool,
  zone: string,
  onProgress: (table: string, seconds: number) => void = () => undefined,
): Promise<boolean> {
  if ((await calendarZone(pool)) === zone) return false
  return inTransaction(pool, async (client) => {
    await client.query('select pg_advisory_xact_lock($1)', [ROLLUP_LOCK])
    // another process may have built them while this one waited for the lock
    if ((await calendarZone(client)) === zone) return false
    for (const table of ROLLED_UP_TABLES) {
      const started = Date.now()
      const { rollup } = combineOf(table)
      await client.query(`delete from ${rollup} where level in ('day', 'month')`)
      const range = await client.query<{ lo: Date | null; hi: Date | null }>(
        `select min(start) as lo, max(start) as hi from ${rollup} where level = 'hour'`,
      )
      const { lo, hi } = range.rows[0] ?? { lo: null, hi: null }
      if (lo && hi) {
        await refresh(client, table, 'day', lo.getTime(), hi.getTime() + HOUR_MS, zone)
        await refresh(client, table, 'month', lo.getTime(), hi.getTime() + HOUR_MS, zone)
      }
      onProgress(table, (Date.now() - started) / 1000)
    }
    await client.query(
      'insert into rollup_calendar (zone) values ($1) on conflict (singleton) do update set zone = excluded.zone',
      [zone],
    )
    return true
  })
}
