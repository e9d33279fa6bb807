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
 * Both sides of 1, 3 and 4 must give the same rows (numbers within 1e-9): checked once. Each side
 * is timed until its whole answer is in hand (the body; the scan's rows as text), the goals judged
 * so; the time with the benchmark's own parse of the answer is printed beside it.
 *
 * Growth: the cases are run over the last 1, 2, 5 and 10 years of the history (those it holds),
 * printed as one table; the goals are judged over the whole history. BENCH_METERS (default 22, the
 * estate) adds power meters beyond the estate's 22, their quarter hours written by one SQL insert
 * per year (values do not matter to a read's cost) and rolled up by the write path's end.
 */
import { performance } from 'node:perf_hooks'
import type pg from 'pg'
import type { EnergyDatabase } from '../packages/energy-data/src/db/schema.ts'
import { encoding } from '../packages/energy-data/src/export/encoders.ts'
import { createApiKey } from '../packages/energy-data/src/repositories/api-keys.ts'
import { measurementsWritten } from '../packages/energy-data/src/repositories/measurement-writes.ts'
import {
  planSeries,
  readSeries,
  type SeriesRequest,
  type SeriesSource,
} from '../packages/energy-data/src/repositories/measurements.ts'
import { buildCalendar } from '../packages/energy-data/src/repositories/rollups.ts'
import { inTransaction } from '../packages/energy-data/src/repositories/transaction.ts'
import { seedEstate } from '../packages/energy-data/src/seed/seed.ts'
import { energyService } from '../packages/energy-data/src/service.ts'
import { energyNodeFlags, startEnergyService } from './energy-support.ts'
import { BENCH_SERVER_URL, benchDatabase, goalLine, median } from './support.ts'

const YEARS = Math.max(1, Number(process.env.BENCH_YEARS ?? 10))
const METER_COUNT = Math.max(22, Number(process.env.BENCH_METERS ?? 22))
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
    if (METER_COUNT > 22) await addMeters(database.pool, METER_COUNT - 22)
    // what the service's first start (or `pnpm energy seed`) does, here before the service starts
    const calendarStarted = performance.now()
    await buildCalendar(database.pool, ZONE)
    line(`the days and months of ${ZONE} built in ${((performance.now() - calendarStarted) / 1000).toFixed(0)} s`)
    await database.pool.query('vacuum analyze')
    const ids = (await database.pool.query<{ id: number }>('select id from meters order by id')).rows.map((r) => r.id)
    const { key } = await createApiKey(database.db, { name: 'bench', endpoints: ['*'] })
    // no window cache: every request reads the database, as a first view of a window does
    const started = await startEnergyService(database.url, energyNodeFlags(process.env.BENCH_NODE_FLAGS), {
      ENERGY_CACHE_MB: '0',
      // 200 meters' days over ten years are 730,000 rows
      ENERGY_MAX_ROWS: '2000000',
    })
    stop = () => started.child.kill('SIGTERM')
    const base = started.base
    const window = (from: number, to: number) =>
      `start_datetime=${new Date(from).toISOString()}&end_datetime=${new Date(to).toISOString()}`
    const meterIds = ids.map((id) => `ids=${id}`).join('&')

    // each side is timed until its whole answer is in hand (`ms`: the body, the scan's rows as text),
    // and again once the benchmark has parsed it (`parsedMs`): the parse is the client's cost, not the
    // service's, and a JSON body of 60,000 rows takes this process longer to parse than to receive
    const http = async (path: string): Promise<{ ms: number; parsedMs: number; rows: Row[] }> => {
      const start = performance.now()
      const response = await fetch(`${base}${path}`, { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } })
      const body = await response.text()
      const ms = performance.now() - start
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${body}`)
      const rows = JSON.parse(body) as Row[]
      return { ms, parsedMs: performance.now() - start, rows }
    }
    const { rowSql } = encoding('raw', String)
    // the baseline: the same answer from the quarter hours, as the service read it before the rollups
    const scan = async (source: SeriesSource, aggregation: SeriesRequest['aggregation'], startMs: number) => {
      const start = performance.now()
      const request: SeriesRequest = {
        source,
        aggregation,
        zone: ZONE,
        startMs,
        endMs: END - 900_000,
        fill: 'none',
        coverage: false,
        quarterScan: true,
      }
      const plan = await planSeries(database.pool, request)
      const texts: string[] = []
      for await (const slice of readSeries(database.pool, request, plan, rowSql)) {
        for (const [, text] of slice) texts.push(text)
      }
      const ms = performance.now() - start
      const rows = texts.map((text) => JSON.parse(`{${text}}`) as Row)
      return { ms, parsedMs: performance.now() - start, rows }
    }
    const meters: SeriesSource = { kind: 'meters', ids, tags: ['ok'] }
    const pv: SeriesSource = { kind: 'group', group: 'pv' }
    // the last 1, 2, 5, 10 years of the history: how each answer's cost grows with the history under it
    const spans = [...new Set([1, 2, 5, 10].filter((y) => y < YEARS).concat(YEARS))]
    const casesOf = (span: number) => {
      const from = Date.UTC(2026 - span, 0, 1)
      const years = window(from, END - 900_000)
      return [
        {
          key: 'monthly',
          name: `1. /data/meters, ${ids.length} meters, 1 mon, ${span} years`,
          path: `/data/meters?${meterIds}&aggregation=1%20mon&${years}`,
          source: meters,
          aggregation: '1 mon' as const,
          from,
          goal: 50,
        },
        {
          key: 'daily',
          name: `3. /data/meters, ${ids.length} meters, 1 d, ${span} years`,
          path: `/data/meters?${meterIds}&aggregation=1%20d&${years}`,
          source: meters,
          aggregation: '1 d' as const,
          from,
          goal: 10,
        },
        {
          key: 'pv',
          name: `4. /data/pv, 1 mon, ${span} years`,
          path: `/data/pv?aggregation=1%20mon&${years}`,
          source: pv,
          aggregation: '1 mon' as const,
          from,
          goal: 10,
        },
      ]
    }
    // a raw request answering as many rows as another: ids x quarters, back from the end
    const rawAsMany = (rows: number) => {
      const quarters = Math.ceil(rows / ids.length)
      return `/data/meters?${meterIds}&${window(END - quarters * 900_000, END - 900_000)}`
    }

    const plans = []
    for (const span of spans) {
      const cases = casesOf(span)
      // the same rows both ways, once, before timing
      const counts = new Map<string, number>()
      for (const c of cases) {
        const ours = await http(c.path)
        const theirs = await scan(c.source, c.aggregation, c.from)
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
        counts.set(c.key, ours.rows.length)
        line(`${c.name}: ${ours.rows.length} rows, the same both ways`)
      }
      const [monthly, daily] = cases as [(typeof cases)[number], (typeof cases)[number]]
      const raws = [
        {
          key: 'monthly-raw',
          name: `2. the monthly table, ${span} years`,
          path: monthly.path,
          raw: rawAsMany(counts.get('monthly') ?? 0),
        },
        // where the daily table's time goes: a raw answer of as many rows costs about as much
        {
          key: 'daily-raw',
          name: `3b. the daily table, ${span} years`,
          path: daily.path,
          raw: rawAsMany(counts.get('daily') ?? 0),
        },
      ]
      plans.push({ span, cases, raws, counts })
    }

    // per span and case: our times and the ratios of each round
    const times = new Map<string, number[]>()
    const ratios = new Map<string, number[]>()
    const push = (map: Map<string, number[]>, name: string, r: number) => map.set(name, [...(map.get(name) ?? []), r])
    for (let round = 1; round <= RUNS; round++) {
      for (const { span, cases, raws } of plans) {
        for (const c of cases) {
          const ours = await http(c.path)
          const theirs = await scan(c.source, c.aggregation, c.from)
          line(
            `round ${round} ${c.name}: rollups ${ms(ours.ms)}, quarter-hour scan ${ms(theirs.ms)} (${(theirs.ms / ours.ms).toFixed(1)}x);` +
              ` parsed by the client too: ${ms(ours.parsedMs)} and ${ms(theirs.parsedMs)} (${(theirs.parsedMs / ours.parsedMs).toFixed(1)}x)`,
          )
          push(times, `${span}:${c.key}`, ours.ms)
          push(ratios, `${span}:${c.key}`, theirs.ms / ours.ms)
          push(ratios, `${span}:${c.key}:parsed`, theirs.parsedMs / ours.parsedMs)
        }
        for (const r of raws) {
          const ours = await http(r.path)
          const raw = await http(r.raw)
          line(
            `round ${round} ${r.name} ${ms(ours.ms)} (${ours.rows.length} rows) against raw 15 m ${ms(raw.ms)} (${raw.rows.length} rows)`,
          )
          push(ratios, `${span}:${r.key}`, ours.ms / raw.ms)
        }
      }
    }
    line('')
    line(
      `growth, ${ids.length} meters (medians of ${RUNS} rounds): years | monthly: time, rows, x scan, x raw | daily: time, rows, x scan, x raw, x scan parsed | pv monthly: time, x scan`,
    )
    const mid = (key: string) => median(ratios.get(key) ?? [])
    const at = (key: string) => ms(median(times.get(key) ?? []))
    for (const { span, counts } of plans) {
      line(
        `growth | ${span} | ${at(`${span}:monthly`)} | ${counts.get('monthly')} | ${mid(`${span}:monthly`).toFixed(1)}x | ${mid(`${span}:monthly-raw`).toFixed(2)}x` +
          ` | ${at(`${span}:daily`)} | ${counts.get('daily')} | ${mid(`${span}:daily`).toFixed(1)}x | ${mid(`${span}:daily-raw`).toFixed(2)}x | ${mid(`${span}:daily:parsed`).toFixed(1)}x` +
          ` | ${at(`${span}:pv`)} | ${mid(`${span}:pv`).toFixed(1)}x`,
      )
    }
    const whole = plans[plans.length - 1] as (typeof plans)[number]
    for (const c of whole.cases)
      line(
        goalLine(`${c.name} against its quarter-hour scan`, ratios.get(`${whole.span}:${c.key}`) ?? [], {
          atLeast: c.goal,
        }),
      )
    for (const r of whole.raws) {
      line(
        goalLine(
          `${r.name} against a raw request of as many rows (time ratio)`,
          ratios.get(`${whole.span}:${r.key}`) ?? [],
          {
            atMost: 2,
          },
        ),
      )
    }
  } finally {
    stop?.()
    await database.close()
  }
}

/**
 * `count` power meters beyond the estate (ids from 10,001), on the estate's dataloggers, with a
 * quarter hour each for every quarter of the history: one insert per year, then the write path's
 * end over the whole history (rollups), as an import would.
 */
async function addMeters(pool: pg.Pool, count: number) {
  const started = performance.now()
  await pool.query(
    `insert into meters (id, description, date_from, datalogger_id, type_id, unit_id, quantity_id)
     select 10000 + k, (10000 + k) || ') Sottoquadro ' || k, $1, d.id, m.type_id, m.unit_id, m.quantity_id
     from generate_series(1, $2::int) k
     cross join lateral (select id from dataloggers order by id offset (k % (select count(*) from dataloggers)) limit 1) d
     cross join (select type_id, unit_id, quantity_id from meters where id = 900) m`,
    [new Date(START), count],
  )
  for (let year = 2026 - YEARS; year < 2026; year++) {
    await pool.query(
      `insert into data_15m (time_15m, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag)
       select t, 10000 + k, v, v * 0.9, v * 1.1, v * 15, 15, 'ok'
       from generate_series($1::timestamptz, $2::timestamptz - interval '15 minutes', interval '15 minutes') t,
         generate_series(1, $3::int) k, lateral (select 10 + random() * 90 as v) x`,
      [new Date(Date.UTC(year, 0, 1)), new Date(Date.UTC(year + 1, 0, 1)), count],
    )
    line(`  ${count} more meters: ${year} written (${((performance.now() - started) / 1000).toFixed(0)} s)`)
  }
  await inTransaction(pool, (client) => measurementsWritten(client, { tables: ['data_15m'], fromMs: START, toMs: END }))
  line(`${count} more meters over ${YEARS} years, rolled up, in ${((performance.now() - started) / 1000).toFixed(0)} s`)
}

await main()
