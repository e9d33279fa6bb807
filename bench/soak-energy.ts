/**
 * Soak of the energy data API: a fixed request rate for a bounded time against a real service
 * process on loopback, with the process's RSS and event-loop delay sampled every second.
 *
 *   node --experimental-strip-types bench/soak-energy.ts            # 60 s
 *   SOAK_SECONDS=10 node --experimental-strip-types bench/soak-energy.ts   # the short CI form
 *
 * Creates (and drops) its own database, as the tests do, on the server of
 * SOAK_DATABASE_URL / BENCH_DATABASE_URL / TEST_DATABASE_URL (default the local server), seeds the last four days,
 * starts the service with its production Node flags (SOAK_NODE_FLAGS overrides) and sends
 * SOAK_RATE requests a second (default 40), a mix of: /data/pv one day as JSON, /data/meters as
 * CSV, /metadata/meters/, /chart/fotovoltaico, /report/pv. Prints the series summary and
 * exits 1 on any failed request or when RSS keeps growing over the second half of the run.
 */
import type { ChildProcess } from 'node:child_process'
import type { EnergyDatabase } from '../packages/energy-data/src/db/schema.ts'
import { createApiKey } from '../packages/energy-data/src/repositories/api-keys.ts'
import { seedEstate } from '../packages/energy-data/src/seed/seed.ts'
import { energyService } from '../packages/energy-data/src/service.ts'
import { energyNodeFlags, startEnergyService } from './energy-support.ts'
import { BENCH_SERVER_URL, benchDatabase } from './support.ts'

const ADMIN_URL = process.env.SOAK_DATABASE_URL ?? BENCH_SERVER_URL
const SECONDS = Number(process.env.SOAK_SECONDS ?? 60)
const RATE = Number(process.env.SOAK_RATE ?? 40)
/** The service's production heap sizing (docs/RELIABILITY.md). */
const NODE_FLAGS = energyNodeFlags(process.env.SOAK_NODE_FLAGS)
/** RSS may rise at most this much over the second half (MB per minute of least-squares slope)... */
const MAX_SLOPE_MB_PER_MIN = Number(process.env.SOAK_MAX_SLOPE ?? 6)
/** ...unless the rise itself stays under this (GC sawtooth on a short run). */
const NOISE_MB = 8
const MAX_IN_FLIGHT = 64

const line = (text: string) => process.stdout.write(`${text}\n`)
const mb = (bytes: number) => bytes / 1024 / 1024

async function metrics(base: string): Promise<{ rss: number; lagP99: number; lagMax: number }> {
  const text = await (await fetch(`${base}/metrics`)).text()
  const value = (metric: string) =>
    Number(new RegExp(`^${metric}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
  return {
    rss: value('process_resident_memory_bytes'),
    lagP99: value('nodejs_eventloop_lag_p99_seconds'),
    lagMax: value('nodejs_eventloop_lag_max_seconds'),
  }
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length
  const mx = xs.reduce((a, b) => a + b, 0) / n
  const my = ys.reduce((a, b) => a + b, 0) / n
  let num = 0
  let den = 0
  for (let i = 0; i < n; i++) {
    num += ((xs[i] as number) - mx) * ((ys[i] as number) - my)
    den += ((xs[i] as number) - mx) ** 2
  }
  return den ? num / den : 0
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] as number

async function main() {
  const database = await benchDatabase<EnergyDatabase>('energysoak', energyService.migrationsDir, ADMIN_URL)
  const { url } = database
  let server: ChildProcess | undefined
  try {
    const DAY = 86_400_000
    const today = Math.floor(Date.now() / DAY) * DAY
    await seedEstate(database.pool, { fromMs: today - 3 * DAY, toMs: today + DAY, seed: 3 })
    const { key } = await createApiKey(database.db, { name: 'soak', endpoints: ['*'] })
    const day = new Date(today - DAY).toISOString().slice(0, 10)
    const window = `start_datetime=${day}%2000:00:00&end_datetime=${day}%2023:45:00`
    const mix: Array<[string, string]> = [
      ['data/pv json', `/data/pv?${window}`],
      ['data/meters csv', `/data/meters?${window}&ids=860&ids=861&ids=862&data_format=csv`],
      ['metadata/meters', '/metadata/meters/'],
      ['chart/fotovoltaico', '/chart/fotovoltaico'],
      ['report/pv', '/report/pv'],
    ]
    const started = await startEnergyService(url, NODE_FLAGS)
    server = started.child
    const { base } = started
    for (const [label, target] of mix) {
      const response = await fetch(`${base}${target}`, { headers: { 'x-api-key': key } })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`${label}: ${response.status} before the soak`)
    }
    line(
      `soak energy-data: ${SECONDS} s at ${RATE} requests/s on ${base} (node ${NODE_FLAGS.join(' ')}), database ${new URL(url).pathname.slice(1)}`,
    )

    const errors: string[] = []
    const latencies: number[] = []
    let sent = 0
    let inFlight = 0
    let skipped = 0
    const fire = (i: number) => {
      const [label, target] = mix[i % mix.length] as [string, string]
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped++ // the service cannot keep up: counted as an error below
        return
      }
      inFlight++
      sent++
      const t0 = performance.now()
      fetch(`${base}${target}`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(10_000) })
        .then(async (response) => {
          await response.arrayBuffer()
          if (response.status !== 200) errors.push(`${label}: ${response.status}`)
          latencies.push(performance.now() - t0)
        })
        .catch((error: unknown) => errors.push(`${label}: ${(error as Error).message}`))
        .finally(() => inFlight--)
    }
    const samples: Array<{ t: number; rss: number; lagP99: number; lagMax: number }> = []
    const start = performance.now()
    let next = 0
    const ticker = setInterval(() => {
      const due = Math.floor(((performance.now() - start) / 1000) * RATE)
      while (next < due) fire(next++)
    }, 5)
    while (performance.now() - start < SECONDS * 1000) {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const m = await metrics(base)
      samples.push({ t: (performance.now() - start) / 1000, ...m })
    }
    clearInterval(ticker)
    while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 20))

    const rss = samples.map((s) => mb(s.rss))
    const half = samples.slice(Math.floor(samples.length / 2))
    const halfRss = half.map((s) => mb(s.rss))
    const perMin =
      slope(
        half.map((s) => s.t),
        halfRss,
      ) * 60
    const rise = (halfRss[halfRss.length - 1] ?? 0) - (halfRss[0] ?? 0)
    const lag = samples.map((s) => s.lagP99 * 1000)
    const lagMax = Math.max(...samples.map((s) => s.lagMax * 1000))
    line(
      `requests: ${sent} sent (${(sent / SECONDS).toFixed(1)}/s), ${errors.length + skipped} errors, ${skipped} not sent (backlog)`,
    )
    line(
      `latency: p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
    )
    line(
      `RSS: first ${rss[0]?.toFixed(1)} MB, min ${Math.min(...rss).toFixed(1)}, median ${quantile(rss, 0.5).toFixed(1)}, ` +
        `max ${Math.max(...rss).toFixed(1)}, last ${rss[rss.length - 1]?.toFixed(1)} MB (${samples.length} samples)`,
    )
    line(`RSS over the second half: slope ${perMin.toFixed(2)} MB/min, rise ${rise.toFixed(1)} MB`)
    line(
      `event-loop delay: p99 median ${quantile(lag, 0.5).toFixed(1)} ms, p99 max ${Math.max(...lag).toFixed(1)} ms, max ${lagMax.toFixed(1)} ms`,
    )
    for (const e of [...new Set(errors)].slice(0, 10)) line(`  error: ${e}`)
    const growing = perMin > MAX_SLOPE_MB_PER_MIN && rise > NOISE_MB
    if (errors.length + skipped > 0 || growing) {
      line(`FAIL: ${errors.length + skipped} errors${growing ? ', RSS keeps growing' : ''}`)
      process.exitCode = 1
    } else {
      line('OK: no errors, no growth trend')
    }
  } finally {
    server?.kill('SIGTERM')
    if (server && server.exitCode === null) await new Promise((resolve) => server?.once('exit', resolve))
    await database.close()
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`)
  process.exit(1)
})
