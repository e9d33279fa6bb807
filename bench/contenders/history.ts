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
export async function fillSampleHistory(databaseUrl: string, samples: number): Promise<void> {
  void databaseUrl
  throw new Error(
    `BENCH_HISTORY=${samples}: fillSampleHistory (bench/contenders/history.ts) is not written yet; unset BENCH_HISTORY`,
  )
}
