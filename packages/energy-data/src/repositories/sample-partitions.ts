import type pg from 'pg'

/**
 * `meter_samples` is partitioned by UTC month (migration 0010). A sample's month must have its
 * partition before the sample is inserted: `ensure_sample_partition` makes one where missing (the
 * writer's role may call it) and only looks it up where it is made. Making one locks the table
 * until its transaction ends, so the ingest service makes the coming month's ahead of time
 * (`prepareSamplePartitions`) and a write finds it made.
 */

export const monthOf = (us: number): string => {
  const d = new Date(Math.floor(us / 1000))
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-01T00:00:00Z`
}

/**
 * The months of `count` instants (epoch microseconds, the i-th `instantUs(i)`), as
 * `ensure_sample_partition` takes them: read in place, a batch's thousands of instants need no
 * array of their own.
 */
export function monthsOf(count: number, instantUs: (i: number) => number): string[] {
  const months = new Set<string>()
  // the month of the last instant, and its bounds: a batch's instants mostly share a month
  let from = Number.POSITIVE_INFINITY
  let to = Number.NEGATIVE_INFINITY
  for (let i = 0; i < count; i++) {
    const us = instantUs(i)
    if (us >= from && us < to) continue
    const d = new Date(Math.floor(us / 1000))
    from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) * 1000
    to = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) * 1000
    months.add(monthOf(us))
  }
  return [...months].sort()
}

/** The partitions of the months holding these instants (epoch microseconds), made where missing. */
export async function ensureSamplePartitions(
  client: pg.PoolClient | pg.Pool,
  instantsUs: readonly number[],
): Promise<void> {
  await client.query('select ensure_sample_partition(m) from unnest($1::timestamptz[]) as m', [
    monthsOf(instantsUs.length, (i) => instantsUs[i] as number),
  ])
}

/** This month's and the next month's partitions, made ahead of the samples that will need them. */
export async function prepareSamplePartitions(pool: pg.Pool, nowMs = Date.now()): Promise<void> {
  const next = new Date(nowMs)
  next.setUTCDate(1)
  next.setUTCMonth(next.getUTCMonth() + 1)
  await ensureSamplePartitions(pool, [nowMs * 1000, next.getTime() * 1000])
}

/**
 * Drops the samples of the months wholly before `beforeMs` (their quarter hours stay): the
 * retention of raw samples. Returns the partitions dropped.
 */
export async function dropSamplePartitionsBefore(pool: pg.Pool, beforeMs: number): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>('select drop_sample_partitions_before($1) as name', [
    new Date(beforeMs),
  ])
  return rows.map((r) => r.name)
}
