/**
 * Reads that cost what the answer costs: aggregations of an hour or more from the hourly rollups,
 * against the quarter-hour scan of the same answer, on PostgreSQL.
 *
 *   node --experimental-strip-types bench/rollups.ts            # BENCH_YEARS=10 by default
 *
 * Creates (and drops) its own database, seeds BENCH_YEARS years of the whole estate through the
 * write path (22 meters, every group; the rollups kept as it goes), starts the service as its own
 * process, and in each round (BENCH_ROUNDS, at least 3) times side by side:
 *  1. /data/meters, every meter, `1 mon` over the years (JSON, over HTTP) against the baseline:
 *     the quarter-hour scan of the same answer, the query the service ran before the rollups
 *     (`quarterScan`, in this process: no HTTP, no key check, so the baseline is favoured);
 *  2. the same request against a raw 15-minute /data/meters request answering as many rows;
 *  3. /data/meters, every meter, `1 d` over the years, against its quarter-hour scan, and (3b)
 *     against a raw request answering as many rows;
 *  4. /data/pv `1 mon` over the years, against its quarter-hour scan.
 * Both sides of 1, 3 and 4 must give the same rows (numbers within 1e-9): checked once.
 */
import { performance } from 'node:perf_hooks'
import type { EnergyDatabase } from '../packages/energy-data/src/db/schema.ts'
import { encoding } from '../packages/energy-data/src/export/encoders.ts'
import { createApiKey } from '../packages/energy-data/src/repositories/api-keys.ts'
import {
  planSeries,
  readSeries,
  type SeriesRequest,
  type SeriesSource,
} from '../packages/energy-data/src/repositories/measurements.ts'
import { seedEstate } from '../packages/energy-data/src/seed/seed.ts'
import { energyService } from '../packages/energy-data/src/service.ts'
import { energyNodeFlags, startEnergyService } from './energy-support.ts'
import { BENCH_SERVER_URL, benchDatabase, goalLine } from './support.ts'

const YEARS = Math.max(1, Number(process.env.BENCH_YEARS ?? 10))
const RUNS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 3))
const END = Date.parse('2026-01-01T00:00:00Z')
const START = Date.UTC(2026 - YEARS, 0, 1)
const ZONE = 'Europe/Rome'

const line = (text: string) => process.stdout.write(`${text}\n`)
const ms = (x: number) => `${x.toFixed(0)} ms`

type Row = Record<string, unknown>

async function main() {
  const database = await benchDatabase<EnergyDatabase>('rollupbench', energyService.migrationsDir, BENCH_SERVER_URL)
  let stop: (() => void) | undefined
  try {
    let lastReport = 0
    const seeded = await seedEstate(database.pool, {
      fromMs: START,
      toMs: END,
      seed: 1,
      chunkDays: 28,
      commitEachChunk: true,
      onProgress: (doneBack) => {
        if (performance.now() - lastReport < 10_000) return
        lastReport = performance.now()
        line(`  seeding: back to ${new Date(doneBack).toISOString().slice(0, 10)}`)
      },
    })
    line(`seeded ${YEARS} years of the whole estate in ${seeded.seconds} s (${seeded.rows.data_15m} per-meter rows)`)
    await database.pool.query('vacuum analyze')
    const ids = (await database.pool.query<{ id: number }>('select id from meters order by id')).rows.map((r) => r.id)
    const { key } = await createApiKey(database.db, { name: 'bench', endpoints: ['*'] })
    // no window cache: every request reads the database, as a first view of a window does
    const started = await startEnergyService(database.url, energyNodeFlags(process.env.BENCH_NODE_FLAGS), {
      ENERGY_CACHE_MB: '0',
    })
    stop = () => started.child.kill('SIGTERM')
    const base = started.base
    const window = (from: number, to: number) =>
      `start_datetime=${new Date(from).toISOString()}&end_datetime=${new Date(to).toISOString()}`
    const years = window(START, END - 900_000)
    const meterIds = ids.map((id) => `ids=${id}`).join('&')

    const http = async (path: string): Promise<{ ms: number; rows: Row[] }> => {
      const start = performance.now()
      const response = await fetch(`${base}${path}`, { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } })
      const rows = (await response.json()) as Row[]
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(rows)}`)
      return { ms: performance.now() - start, rows }
    }
    const { rowSql } = encoding('raw', String)
    // the baseline: the same answer from the quarter hours, as the service read it before the rollups
    const scan = async (source: SeriesSource, aggregation: SeriesRequest['aggregation']) => {
      const start = performance.now()
      const request: SeriesRequest = {
        source,
        aggregation,
        zone: ZONE,
        startMs: START,
        endMs: END - 900_000,
        fill: 'none',
        coverage: false,
        quarterScan: true,
      }
      const plan = await planSeries(database.pool, request)
      const rows: Row[] = []
      for await (const slice of readSeries(database.pool, request, plan, rowSql)) {
        for (const [, text] of slice) rows.push(JSON.parse(`{${text}}`) as Row)
      }
      return { ms: performance.now() - start, rows }
    }
    const meters: SeriesSource = { kind: 'meters', ids, tags: ['ok'] }
    const pv: SeriesSource = { kind: 'group', group: 'pv' }
    const cases = [
      {
        name: `1. /data/meters, ${ids.length} meters, 1 mon, ${YEARS} years`,
        path: `/data/meters?${meterIds}&aggregation=1%20mon&${years}`,
        source: meters,
        aggregation: '1 mon' as const,
        goal: 50,
      },
      {
        name: `3. /data/meters, ${ids.length} meters, 1 d, ${YEARS} years`,
        path: `/data/meters?${meterIds}&aggregation=1%20d&${years}`,
        source: meters,
        aggregation: '1 d' as const,
        goal: 10,
      },
      {
        name: `4. /data/pv, 1 mon, ${YEARS} years`,
        path: `/data/pv?aggregation=1%20mon&${years}`,
        source: pv,
        aggregation: '1 mon' as const,
        goal: 10,
      },
    ]

    // the same rows both ways, once, before timing
    for (const c of cases) {
      const ours = await http(c.path)
      const theirs = await scan(c.source, c.aggregation)
      if (ours.rows.length !== theirs.rows.length)
        throw new Error(`${c.name}: ${ours.rows.length} rows, scan ${theirs.rows.length}`)
      ours.rows.forEach((row, i) => {
        for (const [k, v] of Object.entries(theirs.rows[i] as Row)) {
          const w = row[k]
          const same =
            typeof v === 'number' && typeof w === 'number'
              ? Math.abs(v - w) <= 1e-9 * Math.max(1, Math.abs(v))
              : v === w
          if (!same) throw new Error(`${c.name}: row ${i} ${k}: rollups ${String(w)}, scan ${String(v)}`)
        }
      })
      line(`${c.name}: ${ours.rows.length} rows, the same both ways`)
    }

    // a raw request answering as many rows as another: ids x quarters, back from the end
    const rawAsMany = (rows: number) => {
      const quarters = Math.ceil(rows / ids.length)
      return `/data/meters?${meterIds}&${window(END - quarters * 900_000, END - 900_000)}`
    }
    const monthly = cases[0] as (typeof cases)[number]
    const daily = cases[1] as (typeof cases)[number]
    const raws = [
      { name: '2. the monthly table', path: monthly.path, raw: rawAsMany((await http(monthly.path)).rows.length) },
      // where the daily table's time goes: a raw answer of as many rows costs about as much
      { name: '3b. the daily table', path: daily.path, raw: rawAsMany((await http(daily.path)).rows.length) },
    ]

    const ratios = new Map<string, number[]>()
    const push = (name: string, r: number) => ratios.set(name, [...(ratios.get(name) ?? []), r])
    for (let round = 1; round <= RUNS; round++) {
      for (const c of cases) {
        const ours = await http(c.path)
        const theirs = await scan(c.source, c.aggregation)
        line(
          `round ${round} ${c.name}: rollups ${ms(ours.ms)}, quarter-hour scan ${ms(theirs.ms)} (${(theirs.ms / ours.ms).toFixed(1)}x)`,
        )
        push(c.name, theirs.ms / ours.ms)
      }
      for (const r of raws) {
        const ours = await http(r.path)
        const raw = await http(r.raw)
        line(
          `round ${round} ${r.name} ${ms(ours.ms)} (${ours.rows.length} rows) against raw 15 m ${ms(raw.ms)} (${raw.rows.length} rows)`,
        )
        push(r.name, ours.ms / raw.ms)
      }
    }
    for (const c of cases)
      line(goalLine(`${c.name} against its quarter-hour scan`, ratios.get(c.name) ?? [], { atLeast: c.goal }))
    for (const r of raws) {
      line(
        goalLine(`${r.name} against a raw request of as many rows (time ratio)`, ratios.get(r.name) ?? [], {
          atMost: 2,
        }),
      )
    }
  } finally {
    stop?.()
    await database.close()
  }
}

await main()
