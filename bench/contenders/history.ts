import pg from 'pg'

/**
 * BENCH_HISTORY: ours again, on a database that already holds a long history of samples (tens of
 * millions), to show that the write path's cost follows what it writes, not what it has stored.
 */

/** BENCH_HISTORY, the samples to store before ours runs again; undefined: that rerun is skipped. */
export function historySamples(): number | undefined {
  const value = process.env.BENCH_HISTORY
  if (value === undefined || value === '') return undefined
  const samples = Number(value)
  if (!Number.isInteger(samples) || samples <= 0) throw new Error(`BENCH_HISTORY=${value}: a number of samples`)
  return samples
}

/**
 * Fills `meter_samples` of the energy database at `databaseUrl` with `samples` samples (and what the
 * write path keeps beside them: quarter hours, rollups), then returns. The history must stay out of
 * the instants the bench itself writes: before 2025-01-01 (its throughput rounds start on
 * 2025-03-01, its readiness probes on 2025-02-01, its latency phases within minutes of now).
 */
export async function fillSampleHistory(
  databaseUrl: string,
  samples: number,
): Promise<{ stored: number; quarters: number; bytes: number }> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const meters = (
      await client.query<{ id: number }>('select id from meters where date_to is null order by id')
    ).rows.map((r) => r.id)
    const per = Math.ceil(samples / meters.length)
    // each meter's samples evenly over 2024, as a datalogger sampling every few seconds leaves them
    const stepMs = Math.floor((366 * 86_400_000) / per)
    const from = Date.parse('2024-01-01T00:00:00Z')
    for (let month = 0; month < 12; month++) {
      await client.query('select ensure_sample_partition($1)', [new Date(Date.UTC(2024, month, 1))])
    }
    // a meter at a time, a statement each: the history written as fast as PostgreSQL takes it
    let stored = 0
    for (const meter of meters) {
      const { rowCount } = await client.query(
        `insert into meter_samples (meter_id, at, reading, value, received_at)
         select $1, to_timestamp(($2::float8 + i * $3::float8) / 1000), 'value', 50 + 10 * sin(i), now()
         from generate_series(0, $4::int - 1) as i`,
        [meter, from, stepMs, per],
      )
      stored += rowCount ?? 0
    }
    // the quarter hours and rollups those samples make, as the write path would have kept them
    const { rowCount: quarters } = await client.query(
      `insert into data_15m (time_15m, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag, live)
       select date_bin('15 minutes', at, timestamptz '2000-01-01'), meter_id, avg(value), min(value), max(value),
         sum(value), count(*), 'ok', true
       from meter_samples where at < '2025-01-01' group by 1, 2
       on conflict (meter_id, time_15m) do nothing`,
    )
    await client.query(
      `insert into data_rollup (level, start, meter_id, tag, quarters, values_n, avg_sum, min_value, max_value, sum_value, count_value)
       select 'hour', date_bin('1 hour', time_15m, timestamptz '2000-01-01'), meter_id, tag, count(*), count(avg_value),
         sum(avg_value), min(min_value), max(max_value), sum(sum_value), sum(count_value)
       from data_15m where time_15m >= '2024-01-01' and time_15m < '2025-01-01' group by 2, 3, 4
       on conflict do nothing`,
    )
    // what autovacuum would have done by then
    await client.query('analyze meter_samples')
    await client.query('analyze data_15m')
    await client.query('analyze data_rollup')
    const { rows } = await client.query<{ bytes: string }>(
      `select sum(pg_total_relation_size(c.oid))::int8::text as bytes from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = 'meter_samples'::regclass`,
    )
    return { stored, quarters: quarters ?? 0, bytes: Number(rows[0]?.bytes ?? 0) }
  } finally {
    await client.end()
  }
}
