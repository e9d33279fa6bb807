import type pg from 'pg'
import { MIRRORS, type Series } from '../catalogue/groups.ts'
import { METER_QUARTER_VALUE } from './meter-value.ts'

/**
 * The one mirror rule: a group column that mirrors a meter holds the meter's quarter-hour value
 * where that quarter hour is `ok` (`DEFAULT_TAGS`), nothing elsewhere. Written from the meter's rows
 * after they are written, by the one write path (quarter-writes.ts), whoever writes the meter's rows.
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

/** The mirrored columns of the quarter hours `(meterIds[i], quarterMs[i])` (epoch ms). */
export async function writeMirrors(client: pg.PoolClient, meterIds: number[], quarterMs: number[]): Promise<void> {
  for (const series of MIRRORS) {
    const at = quarterMs.filter((_, i) => meterIds[i] === series.meter!.id).map((ms) => new Date(ms))
    if (at.length > 0) await mirror(client, series, 'time_15m = any($2::timestamptz[])', [at])
  }
}
