/**
 * The write path of live measurements against the tools a user would pick instead, side by side on
 * the same Mosquitto (BENCH_MQTT_URL, default mqtt://127.0.0.1:1883) and the same PostgreSQL:
 *   node --experimental-strip-types bench/ingest.ts          (pnpm bench ingest)
 *
 * Four contenders (bench/contenders/), each on a scratch database of its own and, over MQTT, a
 * topic root and share group of its own, each its own process, all stopped (and their databases
 * dropped) at the end and on Ctrl-C:
 *  - ours: the ingest service (launchService), on a database holding the estate's metadata, counted
 *    in `meter_samples` (stored once, folded into quarter hours, mirrored, rolled up, all committed
 *    before the acknowledgement);
 *  - Node-RED: the flow a user would build (mqtt in -> json -> a function node inserting with `pg`,
 *    ON CONFLICT DO NOTHING), headless, installed on demand into .data/bench/node-red; it
 *    acknowledges on arrival, before its insert: what it committed is counted;
 *  - minimal pipeline: MQTT.js -> COPY into a staging table -> INSERT ... ON CONFLICT DO NOTHING,
 *    acknowledged after commit (contenders/pipeline-program.ts);
 *  - keyed COPY: `psql \copy` of the same rows into a table keyed like `meter_samples`, the ceiling;
 *  - cluster (where RabbitMQ is installed): three RabbitMQ nodes of the bench's own, the fleet
 *    publishing MQTT 3.1.1 to them in turn (PUBACK once the quorum queue holds the pack), two
 *    ingest instances competing for the queue (contenders/cluster.ts; docs/SCALING.md).
 *
 * A fleet of BENCH_PUBLISHERS (50) MQTT clients on the estate's datalogger topics publishes, QoS 1,
 * BENCH_SAMPLES (100,000) samples in SenML packs of 10 records, then of 500, to each contender in
 * turn (the order turns each round), at most 500 packs ahead of what is committed (Mosquitto drops
 * what overflows a subscriber's queue), in BENCH_ROUNDS (3) rounds: samples/s from the first publish
 * until every sample is committed (the count must equal BENCH_SAMPLES; in the first round ten packs
 * published again must add no row), and the CPU seconds of the contender's process and of its
 * PostgreSQL backends meanwhile (/proc, the backends named by pg_stat_activity). Then, per round and
 * contender, BENCH_SECONDS (10) at 1,000 samples/s in packs of 10: the latency from publish to
 * committed (per pack), and for ours to visible in /data/meters (the data API beside it). Medians
 * of the rounds are printed in one table, with ours' ratio to each peer per round and the goals:
 * ours >= 1.0x the minimal pipeline and Node-RED with packs of 10, >= 0.5x keyed COPY with packs of
 * 500, p99 publish -> /data/meters <= 100 ms.
 *
 * Bounded: a throughput measurement stops publishing after BENCH_ROUND_SECONDS (180) and is timed
 * there, then waits as long at most for what was published; a latency phase waits as long at most
 * after its last pack. The data API runs beside ours from the start, as in production.
 *
 * BENCH_HISTORY=N: ours once more after fillSampleHistory (contenders/history.ts) has stored N
 * samples in its `meter_samples`. BENCH_IN_FLIGHT: the service's MQTT_IN_FLIGHT;
 * BENCH_PIPELINE_CONNECTIONS: the minimal pipeline's (8). Docs: docs/PERFORMANCE.md, "The write path
 * against the tools a user would pick".
 */
import { availableParallelism, loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { clusterAvailable, startCluster } from './contenders/cluster.ts'
import type { Contender } from './contenders/contender.ts'
import {
  type Fleet,
  type Latency,
  type Load,
  METER_IDS,
  measureLatency,
  measureThroughput,
  type Range,
  redeliveryAdds,
  startFleet,
  stretchDays,
  type Throughput,
  throughputLoad,
  untilTaking,
  type Watch,
  watch,
} from './contenders/driver.ts'
import { fillSampleHistory, historySamples } from './contenders/history.ts'
import { startKeyedCopy } from './contenders/keyed-copy.ts'
import { startNodeRed } from './contenders/node-red.ts'
import { type Ours, startOurs } from './contenders/ours.ts'
import { startMinimalPipeline } from './contenders/pipeline.ts'
import { goalLine, median } from './support.ts'

const MQTT_URL = process.env.BENCH_MQTT_URL ?? 'mqtt://127.0.0.1:1883'
const SAMPLES = Math.max(1000, Number(process.env.BENCH_SAMPLES ?? 100_000))
const SECONDS = Math.max(5, Number(process.env.BENCH_SECONDS ?? 10))
const ROUNDS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 3))
const PUBLISHERS = Math.max(1, Number(process.env.BENCH_PUBLISHERS ?? 50))
const PACK_SIZES = [10, 500] as const
const HISTORY = historySamples()
const line = (text: string) => process.stdout.write(`${text}\n`)
const run = `${process.pid % 100_000}`
const FIRST_STRETCH = Date.parse('2025-03-01T00:00:00Z')

const started: Contender[] = []
let fleet: Fleet | undefined
/** The fleets of contenders on brokers of their own (the cluster): the same publishers, elsewhere. */
const ownFleets = new Map<Contender, Fleet>()
const fleetFor = (c: Contender): Fleet => ownFleets.get(c) ?? fleet!
const watches = new Map<Contender, Watch>()

let stopping: Promise<void> | undefined
/** Stops every process the bench started and drops its scratch databases (at the end, on Ctrl-C, on a crash); once. */
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    for (const w of watches.values()) await w.close().catch(() => {})
    await fleet?.end().catch(() => {})
    for (const f of ownFleets.values()) await f.end().catch(() => {})
    for (const c of started.splice(0).reverse()) {
      await c.stop().catch((error: Error) => process.stderr.write(`stopping ${c.name}: ${error.message}\n`))
    }
  })()
  return stopping
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`${signal}: stopping the contenders\n`)
    void stopAll().finally(() => process.exit(130))
  })
}
// what the measuring loses once stopping began (its connections closed under it) is of no interest
process.on('unhandledRejection', (error) => {
  if (stopping) return
  process.stderr.write(`${(error as Error).stack ?? error}\n`)
  void stopAll().finally(() => process.exit(1))
})

/** Absolute figures swing with what else the machine runs: the run says how busy it was. */
const machineLoad = () => `load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`

/** The contenders in a new order each round, so none always runs first or last. */
const turn = <T>(xs: readonly T[], round: number): T[] => xs.map((_, i) => xs[(i + round) % xs.length]!)
const rate = (t: Throughput) => t.timed / t.seconds
const perSecond = (n: number) => Math.round(n).toLocaleString('en-US')
const percentile = (sorted: readonly number[], q: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!
const ms = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(0))

interface LatencyFigures {
  p50: number
  p99: number
  max: number
  lost: number
}
function latencyFigures(latencies: readonly number[], packs: number): LatencyFigures {
  const sorted = [...latencies].sort((a, b) => a - b)
  return {
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
    lost: packs - sorted.length,
  }
}

/** /data/meters' samples (the sum of count_value) of the estate's meters over the quarter hours `range` touches. */
async function visibleIn(ours: Ours, range: Range): Promise<number> {
  const { base, key } = ours.dataApi
  const quarter = 900_000
  const from = new Date(Math.floor(range.fromMs / quarter) * quarter).toISOString()
  const to = new Date(Math.ceil(range.toMs / quarter) * quarter).toISOString()
  const ids = METER_IDS.map((id) => `ids=${id}`).join('&')
  const res = await fetch(`${base}/data/meters?${ids}&start_datetime=${from}&end_datetime=${to}`, {
    headers: { 'x-api-key': key },
  })
  if (res.status !== 200) throw new Error(`/data/meters answered ${res.status}: ${await res.text()}`)
  const rows = (await res.json()) as Array<{ count_value: number | null }>
  return rows.reduce((sum, r) => sum + (r.count_value ?? 0), 0)
}

/** One contender's throughput rounds and latency phases. */
interface Figures {
  throughput: Map<number, Throughput[]>
  redelivered: Map<number, number>
  latency: Latency[]
}

async function throughputRound(
  contenders: readonly Contender[],
  records: Map<Contender, Figures>,
  round: number,
  stretch: number,
): Promise<void> {
  for (const [i, packSize] of PACK_SIZES.entries()) {
    const from = FIRST_STRETCH + (stretch * PACK_SIZES.length + i) * stretchDays(SAMPLES) * 86_400_000
    const load: Load = throughputLoad(fleet!, SAMPLES, packSize, from)
    const figures: string[] = []
    for (const c of turn(contenders, round)) {
      const w = watches.get(c)!
      const t = await measureThroughput(fleetFor(c), c, w, load)
      const record = records.get(c)!
      record.throughput.set(packSize, [...(record.throughput.get(packSize) ?? []), t])
      const short =
        (t.capped ? ` (stopped at ${t.published} published, ${t.timed} committed: BENCH_ROUND_SECONDS)` : '') +
        (t.committed === t.published
          ? ''
          : ` COMMITTED ${t.committed} OF ${t.published}${t.stalled ? ' (stalled)' : ''}`)
      figures.push(
        `${c.name} ${perSecond(rate(t))} (${t.seconds.toFixed(2)} s, CPU ${t.processCpu.toFixed(1)} + ${t.databaseCpu.toFixed(1)} s)${short}`,
      )
      if (round === 0 && c.topicRoot) record.redelivered.set(packSize, await redeliveryAdds(fleetFor(c), c, w, load))
    }
    line(`   round ${round + 1}, packs of ${packSize}, samples/s: ${figures.join('; ')}`)
  }
}

async function latencyRound(
  contenders: readonly Contender[],
  records: Map<Contender, Figures>,
  round: number,
  phase: number,
  ours: Ours,
): Promise<void> {
  const figures: string[] = []
  for (const c of turn(contenders, round)) {
    if (!c.topicRoot) continue
    const l = await measureLatency(
      fleetFor(c),
      c,
      watches.get(c)!,
      SECONDS,
      phase,
      c === ours ? (r) => visibleIn(ours, r) : undefined,
    )
    records.get(c)!.latency.push(l)
    const f = latencyFigures(l.committed, l.packs)
    const v = c === ours ? latencyFigures(l.visible, l.packs) : undefined
    figures.push(
      `${c.name} ${ms(f.p50)} / ${ms(f.p99)} / ${ms(f.max)}${f.lost ? ` (${f.lost} packs never committed)` : ''}` +
        (v ? ` (visible ${ms(v.p50)} / ${ms(v.p99)} / ${ms(v.max)})` : ''),
    )
  }
  line(`   round ${round + 1}, publish -> committed p50 / p99 / max ms: ${figures.join('; ')}`)
}

/** p50 and p99 as medians of the rounds', the max of all. */
function latencyCell(latencies: readonly Latency[], which: 'committed' | 'visible'): string {
  if (latencies.length === 0) return '-'
  const rounds = latencies.map((l) => latencyFigures(l[which], l.packs))
  const lost = rounds.reduce((a, f) => a + f.lost, 0)
  return (
    `${ms(median(rounds.map((f) => f.p99)))} ms (${ms(median(rounds.map((f) => f.p50)))} / ${ms(Math.max(...rounds.map((f) => f.max)))})` +
    (lost ? `, ${lost} packs lost` : '')
  )
}

function report(contenders: readonly Contender[], records: Map<Contender, Figures>, ours: Ours): void {
  const header = `| packs of | ${contenders.map((c) => c.name).join(' | ')} |`
  line('')
  line(
    `${SAMPLES.toLocaleString('en-US')} samples from ${fleet!.size} publishers, QoS 1 through ${MQTT_URL}, first publish to all committed; medians of ${ROUNDS} rounds`,
  )
  line(header)
  line(`|---|${contenders.map(() => '---|').join('')}`)
  const cells = (f: (r: Figures) => string) => contenders.map((c) => f(records.get(c)!)).join(' | ')
  for (const packSize of PACK_SIZES) {
    const runs = (r: Figures) => r.throughput.get(packSize) ?? []
    line(`| ${packSize}: samples/s | ${cells((r) => perSecond(median(runs(r).map(rate))))} |`)
    line(
      `| ${packSize}: CPU s, process + PostgreSQL | ${cells((r) => `${median(runs(r).map((t) => t.processCpu)).toFixed(1)} + ${median(runs(r).map((t) => t.databaseCpu)).toFixed(1)}`)} |`,
    )
  }
  line(
    `| 10 at 1,000 samples/s: p99 (p50 / max), publish -> committed | ${cells((r) => latencyCell(r.latency, 'committed'))} |`,
  )
  line(
    `| 10 at 1,000 samples/s: p99 (p50 / max), publish -> /data/meters | ${contenders.map((c) => (c === ours ? latencyCell(records.get(c)!.latency, 'visible') : '-')).join(' | ')} |`,
  )
  line('')
  const mine = records.get(ours)!
  for (const peer of contenders) {
    if (peer === ours) continue
    for (const packSize of PACK_SIZES) {
      const ratios = (mine.throughput.get(packSize) ?? []).map(
        (t, i) => rate(t) / rate(records.get(peer)!.throughput.get(packSize)![i]!),
      )
      const name = `ours / ${peer.name}, packs of ${packSize}`
      const goal =
        packSize === 10 && peer.topicRoot
          ? { atLeast: 1 }
          : packSize === 500 && !peer.topicRoot
            ? { atLeast: 0.5 }
            : undefined
      line(
        goal
          ? goalLine(name, ratios, goal)
          : `${name}: median ${median(ratios).toFixed(2)}x (rounds ${ratios.map((r) => `${r.toFixed(2)}x`).join(', ')})`,
      )
    }
  }
  const p99s = mine.latency.map((l) => latencyFigures(l.visible, l.packs).p99)
  line(
    goalLine(
      '100 ms / p99 publish -> /data/meters, packs of 10 at 1,000 samples/s',
      p99s.map((p) => 100 / p),
      { atLeast: 1 },
    ),
  )
  line('')
  for (const c of contenders) {
    const runs = [...records.get(c)!.throughput.values()].flat()
    const short = runs.filter((t) => t.committed !== t.published).map((t) => `${t.committed} of ${t.published}`)
    const capped = runs.filter((t) => t.capped).length
    const redelivered = [...records.get(c)!.redelivered.values()]
    line(
      `exactly once, ${c.name}: ${short.length === 0 ? 'every sample published committed once, in every round' : `committed ${short.join(', ')} in ${short.length} of ${runs.length} rounds`}` +
        (capped ? ` (${capped} of ${runs.length} stopped by BENCH_ROUND_SECONDS before ${SAMPLES})` : '') +
        (c.topicRoot
          ? `; ten packs published again added ${redelivered.join(' and ')} rows (packs of ${PACK_SIZES.join(' and of ')})`
          : ''),
    )
  }
  line(
    'Node-RED acknowledges each message on arrival (its mqtt in node leaves MQTT.js handleMessage as it is), before its insert: a crash or a refused insert loses what it acknowledged; counted above is what it committed.',
  )
}

async function main(): Promise<void> {
  line(
    `Live measurements, ours against the tools a user would pick, side by side on ${MQTT_URL} and one PostgreSQL (${ROUNDS} rounds):`,
  )
  line(`   ${machineLoad()} at the start`)
  const ours = await startOurs(MQTT_URL, run)
  started.push(ours)
  started.push(await startNodeRed(MQTT_URL, run, (text) => line(`   ${text}`)))
  started.push(await startMinimalPipeline(MQTT_URL, run))
  started.push(await startKeyedCopy())
  if (clusterAvailable()) started.push(await startCluster(run))
  else line('   cluster: skipped, no RabbitMQ on this machine (apt-get install rabbitmq-server)')
  const contenders = [...started]
  fleet = await startFleet(MQTT_URL, PUBLISHERS, run)
  for (const c of contenders) {
    if (c.broker) {
      const { mqtt, ...credential } = c.broker
      ownFleets.set(c, await startFleet(mqtt, PUBLISHERS, `${run}${c.name}`, credential))
    }
    const w = await watch(c)
    watches.set(c, w)
    if (c.topicRoot) await untilTaking(fleetFor(c), c, w)
  }
  const records = new Map<Contender, Figures>(
    contenders.map((c) => [c, { throughput: new Map(), redelivered: new Map(), latency: [] }]),
  )
  const began = performance.now()
  for (let round = 0; round < ROUNDS; round++) {
    await throughputRound(contenders, records, round, round)
    await latencyRound(contenders, records, round, round, ours)
  }
  report(contenders, records, ours)
  line(`(${((performance.now() - began) / 1000).toFixed(0)} s; ${machineLoad()} at the end)`)

  if (HISTORY !== undefined) {
    line('')
    line(`ours again with ${HISTORY.toLocaleString('en-US')} samples stored (fillSampleHistory):`)
    const filling = performance.now()
    const history = await fillSampleHistory(ours.databaseUrl, HISTORY)
    line(
      `   stored ${history.stored.toLocaleString('en-US')} samples (${(history.bytes / 2 ** 30).toFixed(1)} GiB with their index) ` +
        `and ${history.quarters.toLocaleString('en-US')} quarter hours in ${((performance.now() - filling) / 1000).toFixed(0)} s`,
    )
    const again = new Map<Contender, Figures>([[ours, { throughput: new Map(), redelivered: new Map(), latency: [] }]])
    for (let round = 0; round < ROUNDS; round++) {
      await throughputRound([ours], again, round, ROUNDS + round)
      await latencyRound([ours], again, round, ROUNDS + round, ours)
    }
    const after = again.get(ours)!
    for (const packSize of PACK_SIZES) {
      const mine = median((after.throughput.get(packSize) ?? []).map(rate))
      const against = contenders.map((c) => {
        const theirs = median((records.get(c)!.throughput.get(packSize) ?? []).map(rate))
        return `${(mine / theirs).toFixed(2)}x ${c === ours ? 'ours empty' : c.name}`
      })
      line(
        `ours with history, packs of ${packSize}: ${perSecond(mine)} samples/s; ${against.join(', ')} (medians of the rounds above)`,
      )
    }
    line(`publish -> /data/meters with history: ${latencyCell(after.latency, 'visible')}`)
  }
}

await main().then(
  () => stopAll(),
  async (error: Error) => {
    if (stopping) return // a signal stops the bench, and exits
    await stopAll()
    process.stderr.write(`${error.stack ?? error}\n`)
    process.exit(1)
  },
)
