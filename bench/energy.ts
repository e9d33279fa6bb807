/**
 * Speed and memory of the energy data API against baselines run side by side, on PostgreSQL.
 *
 *   node --experimental-strip-types bench/energy.ts [postgres://admin-url]
 *
 * Creates (and drops) its own database, as the tests do, on the server of
 * BENCH_DATABASE_URL / TEST_DATABASE_URL / the first argument (default the local server),
 * seeds a year of the whole estate plus ten years of one group, starts the service as its own
 * process on a random loopback port, and prints each figure with its ratio to the baseline:
 *  1. /data/pv for a year as CSV vs `psql \copy (same rows) to stdout csv`
 *  2. /data/meters for a year as JSON vs a bare pg query + JSON.stringify
 *  3. ten years of one group as CSV: peak RSS of the service process
 *  4. 50 concurrent clients on /data/pv for one day: requests/s and p99 vs a bare Fastify route
 *     (its own process, a pg pool of the service's size) selecting the same rows from pv_15m and
 *     answering them as JSON: no key check, no aggregation, no window logic
 * Each pair is measured side by side in every round (RUNS, BENCH_ROUNDS, at least 3); the goals
 * print their ratio's minimum and median (`goalLine`).
 */
import { type ChildProcess, fork, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { GROUP_COLUMNS } from '../packages/energy-data/src/catalogue/groups.ts'
import type { EnergyDatabase } from '../packages/energy-data/src/db/schema.ts'
import { createApiKey } from '../packages/energy-data/src/repositories/api-keys.ts'
import { seedEstate } from '../packages/energy-data/src/seed/seed.ts'
import { energyService } from '../packages/energy-data/src/service.ts'
import { energyNodeFlags, seedTenYearsOfWater, startEnergyService, TEN_YEARS } from './energy-support.ts'
import { alternating, type CannonResult, cannon, throughput } from './load.ts'
import { BENCH_SERVER_URL, benchDatabase, goalLine, median } from './support.ts'

const ADMIN_URL = (process.argv[2] === 'bare' ? undefined : process.argv[2]) ?? BENCH_SERVER_URL
const RUNS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 3))
/** Seconds of load per round for each of ours and the bare route, in alternating turns. */
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 6)
/** V8 heap sizing: the service's production flags; BENCH_NODE_FLAGS overrides. */
const NODE_FLAGS = energyNodeFlags(process.env.BENCH_NODE_FLAGS)
const YEAR = { from: '2025-01-01T00:00:00Z', to: '2025-12-31T23:45:00Z' }
const METER_IDS = [860, 861, 862, 863, 870, 871, 880, 881, 890, 891]

const line = (text: string) => process.stdout.write(`${text}\n`)
const ms = (x: number) => `${x.toFixed(0)} ms`
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`

async function timed(fn: () => Promise<number>): Promise<{ ms: number; bytes: number }> {
  const start = performance.now()
  const bytes = await fn()
  return { ms: performance.now() - start, bytes }
}

async function download(target: string, key: string): Promise<number> {
  // fetch asks for gzip/br by default; psql \copy compresses nothing, so neither does this side
  // (bench/compression.ts measures compressed answers)
  const response = await fetch(target, { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } })
  if (response.status !== 200) throw new Error(`${target}: ${response.status} ${await response.text()}`)
  let bytes = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length
  return bytes
}

function psqlCopy(url: string, query: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('psql', [url, '-X', '-q', '-c', `\\copy (${query}) to stdout csv header`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let bytes = 0
    child.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length
    })
    child.once('error', reject)
    child.once('exit', (code) => (code === 0 ? resolve(bytes) : reject(new Error(`psql exited ${code}`))))
  })
}

function rssOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024
  return { rss: kb('VmRSS'), peak: kb('VmHWM') }
}

async function main() {
  const wall = performance.now()
  const database = await benchDatabase<EnergyDatabase>('energybench', energyService.migrationsDir, ADMIN_URL)
  const { url } = database
  let server: ChildProcess | undefined
  try {
    const seeded = await seedEstate(database.pool, {
      fromMs: Date.parse(YEAR.from),
      toMs: Date.parse('2026-01-01T00:00:00Z'),
      seed: 1,
    })
    line(`seeded 2025 for the whole estate in ${seeded.seconds} s (${seeded.rows.data_15m} per-meter rows)`)
    await seedTenYearsOfWater(database.pool)
    await database.pool.query('analyze')
    const { key } = await createApiKey(database.db, { name: 'bench', endpoints: ['*'] })
    const started = await startEnergyService(url, NODE_FLAGS)
    server = started.child
    const base = started.base
    const pid = server.pid as number
    line(
      `service pid ${pid} at ${base} (node ${NODE_FLAGS.join(' ') || 'default heap'}), RSS after start ${mb(rssOf(pid).rss)}`,
    )

    // 3 (run first, on the fresh process). ten years of one group as CSV: peak RSS of the service
    const before = rssOf(pid)
    let sampled = before.rss
    const sampler = setInterval(() => {
      sampled = Math.max(sampled, rssOf(pid).rss)
    }, 25)
    const tenUrl = `${base}/data/water?start_datetime=${TEN_YEARS.from}&end_datetime=${TEN_YEARS.to}&data_format=csv`
    const ten = await timed(() => download(tenUrl, key))
    clearInterval(sampler)
    const after = rssOf(pid)
    line('')
    line(`3. /data/water, ten years as CSV (${mb(ten.bytes)} in ${ms(ten.ms)})`)
    line(
      `   service RSS before ${mb(before.rss)}, highest while streaming ${mb(sampled)}, process peak (VmHWM) ${mb(after.peak)}`,
    )
    line(`   peak/limit = ${(after.peak / (200 * 1024 * 1024)).toFixed(2)} (goal < 1, i.e. under 200 MB)`)

    // 1. a year of /data/pv as CSV vs psql \copy of the same rows
    const pvColumns = GROUP_COLUMNS.pv
    const pvUrl = `${base}/data/pv?start_datetime=${YEAR.from}&end_datetime=${YEAR.to}&data_format=csv`
    const pvSql = `select time_15m, ${pvColumns.join(', ')} from pv_15m where time_15m between '${YEAR.from}' and '${YEAR.to}' order by time_15m`
    await download(pvUrl, key)
    await psqlCopy(url, pvSql)
    const api1: number[] = []
    const psql1: number[] = []
    let apiBytes = 0
    let psqlBytes = 0
    for (let i = 0; i < RUNS; i++) {
      const a = await timed(() => download(pvUrl, key))
      const p = await timed(() => psqlCopy(url, pvSql))
      api1.push(a.ms)
      psql1.push(p.ms)
      apiBytes = a.bytes
      psqlBytes = p.bytes
    }
    const pvRows = (await database.pool.query(`select count(*)::int as n from (${pvSql}) x`)).rows[0].n as number
    line('')
    line(`1. /data/pv, one year as CSV (${pvRows} rows)`)
    line(`   service      ${ms(median(api1))}  ${mb(apiBytes)}  ${((pvRows / median(api1)) * 1000).toFixed(0)} rows/s`)
    line(
      `   psql \\copy   ${ms(median(psql1))}  ${mb(psqlBytes)}  ${((pvRows / median(psql1)) * 1000).toFixed(0)} rows/s`,
    )
    line(
      `   ${goalLine(
        'a year of /data/pv as CSV, throughput service/psql',
        api1.map((a, i) => (psql1[i] as number) / a),
        { atLeast: 0.8 },
      )}`,
    )

    // 2. a year of /data/meters as JSON vs bare pg + JSON.stringify
    const ids = METER_IDS.map((id) => `ids=${id}`).join('&')
    const metersUrl = `${base}/data/meters?${ids}&start_datetime=${YEAR.from}&end_datetime=${YEAR.to}`
    const bare = new pg.Pool({ connectionString: url, max: 1 })
    const bareQuery = async () => {
      const result = await bare.query(
        `select time_15m, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag from data_15m
         where meter_id = any($1::int[]) and tag = any($2::text[]) and time_15m between $3 and $4
         order by time_15m, meter_id`,
        [METER_IDS, ['ok'], YEAR.from, YEAR.to],
      )
      return { rows: result.rows.length, bytes: Buffer.byteLength(JSON.stringify(result.rows)) }
    }
    await download(metersUrl, key)
    await bareQuery()
    const api2: number[] = []
    const bare2: number[] = []
    let meterRows = 0
    let metersBytes = 0
    let bareBytes = 0
    for (let i = 0; i < RUNS; i++) {
      const a = await timed(() => download(metersUrl, key))
      metersBytes = a.bytes
      const start = performance.now()
      const b = await bareQuery()
      bare2.push(performance.now() - start)
      api2.push(a.ms)
      meterRows = b.rows
      bareBytes = b.bytes
    }
    await bare.end()
    line('')
    line(`2. /data/meters, one year of ${METER_IDS.length} meters as JSON (${meterRows} rows)`)
    line(`   service                 ${ms(median(api2))}  ${mb(metersBytes)}`)
    line(`   pg + JSON.stringify     ${ms(median(bare2))}  ${mb(bareBytes)}`)
    line(
      `   ${goalLine(
        'a year of /data/meters as JSON, time service/bare',
        api2.map((a, i) => a / (bare2[i] as number)),
        { atMost: 2 },
      )}`,
    )

    // 4. 50 concurrent dashboards asking one day of /data/pv, against the bare route
    const day = { from: '2025-06-01T00:00:00Z', to: '2025-06-01T23:45:00Z' }
    const bareRoute = await startBareRoute(url)
    try {
      const dayUrl = `${base}/data/pv?start_datetime=2025-06-01&end_datetime=${day.to}`
      const bareUrl = `${bareRoute.base}/pv?from=${day.from}&to=${day.to}`
      const load = (target: string, duration: number) =>
        cannon(target, { connections: 50, duration, headers: { 'x-api-key': key } })
      // warm up both (JIT, pool connections)
      await load(dayUrl, 2)
      await load(bareUrl, 2)
      line('')
      line(`4. 50 concurrent clients, one day of /data/pv, ${LOAD_SECONDS} s each per round, in alternating turns`)
      const ratios: number[] = []
      for (let round = 1; round <= RUNS; round++) {
        const [bare, ours] = (await alternating([bareUrl, dayUrl], LOAD_SECONDS, load)) as [CannonResult, CannonResult]
        for (const [name, result] of [
          ['bare Fastify + pg', bare],
          ['/data/pv one day ', ours],
        ] as const) {
          line(
            `   round ${round} ${name}  ${throughput(result).toFixed(0)} req/s  p99 ${result.latency.p99} ms  (${result.non2xx} non-2xx, ${result.errors} errors)`,
          )
        }
        ratios.push(throughput(ours) / throughput(bare))
      }
      line(`   ${goalLine('/data/pv one day, requests/s service/bare route', ratios, { atLeast: 2 })}`)
    } finally {
      bareRoute.child.kill('SIGTERM')
      // the requests autocannon left in flight finish before the service is stopped
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
    line('')
    line(`done in ${((performance.now() - wall) / 1000).toFixed(0)} s`)
  } finally {
    server?.kill('SIGTERM')
    if (server && server.exitCode === null) await new Promise((r) => server?.once('exit', r))
    await database.close()
  }
}

/** The baseline of the load figure, as its own process: resolves with its address. */
function startBareRoute(url: string): Promise<{ child: ChildProcess; base: string }> {
  const child = fork(new URL(import.meta.url).pathname, ['bare', url], {
    execArgv: ['--experimental-strip-types', '--disable-warning=ExperimentalWarning'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    child.once('message', (base) => resolve({ child, base: String(base) }))
    child.once('exit', (code) => reject(new Error(`the bare route exited with ${code}`)))
  })
}

/** A bare Fastify route over a pg pool of the service's size: the rows of pv_15m in a window, as JSON. */
async function serveBareRoute(url: string): Promise<void> {
  const fromEnergy = createRequire(new URL('../packages/energy-data/package.json', import.meta.url))
  const Fastify = (await import(pathToFileURL(fromEnergy.resolve('fastify')).href)).default as (options: object) => {
    get(path: string, handler: (request: { query: { from: string; to: string } }) => Promise<unknown>): void
    listen(options: { port: number; host: string }): Promise<string>
    close(): Promise<void>
  }
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  const text = `select time_15m, ${GROUP_COLUMNS.pv.join(', ')} from pv_15m
    where time_15m >= $1 and time_15m <= $2 order by time_15m`
  const app = Fastify({ logger: false })
  app.get('/pv', async (request) => (await pool.query(text, [request.query.from, request.query.to])).rows)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  process.send?.(base)
  process.once('SIGTERM', async () => {
    await app.close()
    await pool.end()
    process.exit(0)
  })
}

if (process.argv[2] === 'bare') {
  await serveBareRoute(process.argv[3] as string)
} else {
  main().catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
