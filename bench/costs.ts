/**
 * A priced read costs what it carries: a year of hourly cost of one meter against the same read
 * without cost, side by side, on PostgreSQL.
 *
 *   node --experimental-strip-types bench/costs.ts            # BENCH_ROUNDS=5 by default
 *
 * Creates (and drops) its own database holding a year (2025) of quarter hours of meter 860 (an
 * energy meter) with their rollups, starts the service as its own process (no cache of past
 * windows: every request reads), and times `/data/meters?ids=860&aggregation=1 h` over the year
 * (JSON, over HTTP, each side until its whole body is in hand) with and without `cost=true`, in
 * alternating turns, under two tariffs:
 *  1. bands on whole hours (00:00-08:00-19:00-24:00): the prices hold for whole UTC hours, so the
 *     hourly rollups give the amounts (8,760 rows);
 *  2. a newer tariff with a band edge at 07:45: the hours cut there are priced from the quarter
 *     hours (35,040 rows), what the answer needs.
 * Each case prints the source and the rows it reads (never more than the year's quarter hours) and
 * the ratio of the priced read's time to the plain one's (goal: at most 4x with the quarter hours,
 * 2x with the hours).
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { tariffsImport } from '../packages/energy-data/src/commands/rates.ts'
import type { EnergyDatabase } from '../packages/energy-data/src/db/schema.ts'
import { createApiKey } from '../packages/energy-data/src/repositories/api-keys.ts'
import { measurementsWritten } from '../packages/energy-data/src/repositories/measurement-writes.ts'
import { planSeries } from '../packages/energy-data/src/repositories/measurements.ts'
import { buildCalendar } from '../packages/energy-data/src/repositories/rollups.ts'
import { inTransaction } from '../packages/energy-data/src/repositories/transaction.ts'
import { seedEstate } from '../packages/energy-data/src/seed/seed.ts'
import { energyService } from '../packages/energy-data/src/service.ts'
import { energyNodeFlags, startEnergyService } from './energy-support.ts'
import { BENCH_SERVER_URL, benchDatabase, goalLine } from './support.ts'

const RUNS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 5))
const ZONE = 'Europe/Rome'
const FROM = Date.parse('2025-01-01T00:00:00Z')
const TO = Date.parse('2026-01-01T00:00:00Z')
const QUARTERS = (TO - FROM) / 900_000
const line = (text: string) => process.stdout.write(`${text}\n`)

const HEADER = 'commodity,valid_from,valid_to,days,from_time,to_time,price,currency'
const TARIFFS = {
  'whole hours': `${HEADER}\nelectricity,2024-12-01,2026-02-01,all,00:00,08:00,0.18,EUR\nelectricity,2024-12-01,2026-02-01,all,08:00,19:00,0.27,EUR\nelectricity,2024-12-01,2026-02-01,all,19:00,24:00,0.2,EUR\n`,
  'an edge at 07:45': `${HEADER}\nelectricity,2024-12-01,2026-02-01,all,00:00,07:45,0.18,EUR\nelectricity,2024-12-01,2026-02-01,all,07:45,19:00,0.27,EUR\nelectricity,2024-12-01,2026-02-01,all,19:00,24:00,0.2,EUR\n`,
}

async function main() {
  const database = await benchDatabase<EnergyDatabase>('costbench', energyService.migrationsDir, BENCH_SERVER_URL)
  let stop: (() => void) | undefined
  try {
    // the estate's metadata (a day of it), then a year of meter 860 by one insert, rolled up by the write path's end
    await seedEstate(database.pool, { fromMs: FROM, toMs: FROM + 900_000, seed: 1 })
    await database.pool.query(
      `insert into data_15m (time_15m, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag)
       select t, 860, v / 15, v / 20, v / 10, v, 15, 'ok'
       from (select t, 10 + 5 * random() as v from generate_series($1::timestamptz, $2::timestamptz - interval '15 minutes', interval '15 minutes') t) q
       on conflict do nothing`,
      [new Date(FROM), new Date(TO)],
    )
    await inTransaction(database.pool, (client) =>
      measurementsWritten(client, { tables: ['data_15m'], fromMs: FROM, toMs: TO }),
    )
    await buildCalendar(database.pool, ZONE)
    await database.pool.query('vacuum analyze')
    const { key } = await createApiKey(database.db, { name: 'bench', endpoints: ['*'] })
    const started = await startEnergyService(database.url, energyNodeFlags(process.env.BENCH_NODE_FLAGS), {
      ENERGY_CACHE_MB: '0',
      ENERGY_TIMEZONE: ZONE,
    })
    stop = () => started.child.kill('SIGTERM')
    const window = 'ids=860&aggregation=1%20h&start_datetime=2025-01-01&end_datetime=2025-12-31%2023:45:00'
    const timed = async (query: string) => {
      const t0 = performance.now()
      const response = await fetch(`${started.base}/data/meters?${query}`, {
        headers: { 'x-api-key': key, 'accept-encoding': 'identity' },
      })
      const body = await response.text()
      if (response.status !== 200) throw new Error(`${response.status} ${body.slice(0, 200)}`)
      return { ms: performance.now() - t0, rows: (JSON.parse(body) as unknown[]).length }
    }
    const dir = mkdtempSync(join(tmpdir(), 'costbench-'))
    const goals: string[] = []
    for (const [name, text] of Object.entries(TARIFFS)) {
      const path = join(dir, `${name.replace(/\W+/g, '-')}.csv`)
      writeFileSync(path, text)
      await tariffsImport(database.pool, path, ZONE)
      const plan = await planSeries(database.pool, {
        source: { kind: 'meters', ids: [860], tags: ['ok'] },
        aggregation: '1 h',
        zone: ZONE,
        startMs: FROM,
        endMs: TO - 900_000,
        fill: 'none',
        coverage: false,
        priced: ['cost'],
      })
      const source = plan.pricing?.source === 'hour' ? 'data_rollup' : 'data_15m'
      const read = await database.pool.query<{ n: number }>(
        source === 'data_rollup'
          ? "select count(*)::int as n from data_rollup where level = 'hour' and meter_id = 860 and start >= $1 and start < $2"
          : 'select count(*)::int as n from data_15m where meter_id = 860 and time_15m >= $1 and time_15m < $2',
        [new Date(plan.lo), new Date(plan.hi)],
      )
      const rowsRead = read.rows[0]?.n ?? 0
      line(
        `tariff with ${name}: the priced read takes its amounts from ${source} (${rowsRead} rows; the year holds ${QUARTERS} quarter hours: ${(rowsRead / QUARTERS).toFixed(2)}x)`,
      )
      if (rowsRead > QUARTERS) throw new Error('the priced read reads more than the quarter hours of the year')
      // warm both paths once
      await timed(window)
      await timed(`${window}&cost=true`)
      const ratios: number[] = []
      for (let round = 0; round < RUNS; round++) {
        const pair = round % 2 === 0 ? [false, true] : [true, false]
        const times: Record<string, number> = {}
        for (const priced of pair) {
          const { ms, rows } = await timed(priced ? `${window}&cost=true` : window)
          times[priced ? 'priced' : 'plain'] = ms
          if (rows !== 8760) throw new Error(`expected 8760 hours, got ${rows}`)
        }
        const ratio = (times.priced as number) / (times.plain as number)
        ratios.push(ratio)
        line(
          `  round ${round + 1}: plain ${times.plain?.toFixed(0)} ms, with cost ${times.priced?.toFixed(0)} ms (${ratio.toFixed(2)}x)`,
        )
      }
      goals.push(
        goalLine(
          `a year of hourly cost of one meter, tariff with ${name}, time vs the same read without cost`,
          ratios,
          {
            atMost: source === 'data_rollup' ? 2 : 4,
          },
        ),
      )
    }
    for (const goal of goals) line(goal)
  } finally {
    stop?.()
    await database.close()
  }
}

await main()
