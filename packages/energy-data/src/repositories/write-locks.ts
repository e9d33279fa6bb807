import type pg from 'pg'
import { ROLLUP_LOCK } from './rollups.ts'

/** The key space of the meters' write locks (pg_advisory_xact_lock(space, meter id)); arbitrary. */
const METER_LOCK_SPACE = 727_274

/**
 * The locks of a write: the rollups' lock shared (a rebuild of the calendar takes it alone), then
 * each meter written, in one order (ascending ids), so that two writers of one meter take turns
 * and two writers of different meters never wait for each other. Held until the transaction ends.
 * `partitions`: the months of `meter_samples` the write needs, made first where missing, in the
 * same statement (one round trip: the live path's statements are its cost).
 */
export async function lockForWrite(
  client: pg.PoolClient,
  meterIds: Iterable<number>,
  partitions: readonly string[] = [],
): Promise<void> {
  const ids = [...new Set(meterIds)].sort((a, b) => a - b)
  // an Append runs its parts in order: the partitions, the shared lock, then the meters ascending
  await client.query(
    `select count(*) from (
       select ensure_sample_partition(p) from unnest($4::timestamptz[]) as p
       union all
       select pg_advisory_xact_lock_shared($1::bigint)::text
       union all
       select pg_advisory_xact_lock($2::int, m)::text from unnest($3::int[]) as m
     ) as locks`,
    [ROLLUP_LOCK, METER_LOCK_SPACE, ids, partitions],
  )
}
