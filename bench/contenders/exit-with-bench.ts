/**
 * Preloaded (`--import`) into each contender process the bench starts: the process exits when the
 * bench (`BENCH_PID`) is gone, even killed outright, so no contender outlives a run.
 */
const bench = Number(process.env.BENCH_PID)
if (Number.isInteger(bench) && bench > 0) {
  setInterval(() => {
    try {
      process.kill(bench, 0)
    } catch {
      process.exit(1)
    }
  }, 1000).unref()
}
