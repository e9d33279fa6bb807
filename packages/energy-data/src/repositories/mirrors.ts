import type pg from 'pg'
import { MIRRORS, type Series } from '../catalogue/groups.ts'
import { METER_QUARTER_VALUE } from './meter-value.ts'

/**
 * The one mirror rule: a group column that mirrors a meter holds the meter's quarter-hour value
 * where that quarter hour is `ok` (`DEFAULT_TAGS`), nothing elsewhere. Written from the meter's rows
 * after they are written, by the seed and by the live fold alike.
 */
async function mirror(client: pg.PoolClient, series: Series, where: string, values: unknown[]): Promise<void> {
  await client.query(
    `insert into ${series.group}_15m (time_15m, ${series.column})
     select time_15m, case when tag = 'ok' then ${METER_QUARTER_VALUE} end from data_15m
     where meter_id = $1 and ${where}
     on conflict (time_15m) do update set ${series.column} = excluded.${series.column}`,
    [series.meter!.id, ...values],
  )
}

/** The mirrored columns of the quarter hours `(meterIds[i], quarters[i])`. */
export async function writeMirrors(client: pg.PoolClient, meterIds: number[], quarters: Date[]): Promise<void> {
  for (const series of MIRRORS) {
    const at = quarters.filter((_, i) => meterIds[i] === series.meter!.id)
    if (at.length > 0) await mirror(client, series, 'time_15m = any($2::timestamptz[])', [at])
  }
}

/** Every mirrored column over `[fromMs, toMs)`. */
export async function writeMirrorsBetween(client: pg.PoolClient, fromMs: number, toMs: number): Promise<void> {
  for (const series of MIRRORS) {
    await mirror(client, series, 'time_15m >= $2 and time_15m < $3', [new Date(fromMs), new Date(toMs)])
  }
}
