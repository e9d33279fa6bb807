/**
 * The driver of bench/ingest.ts: a fleet of publishers (MQTT clients, QoS 1) standing for the
 * estate's dataloggers, the SenML packs they send, and the measures taken of a contender while
 * they send them: samples/s from the first publish until every sample is committed, exactly once,
 * with the CPU time of the contender's process and of its PostgreSQL backends; the latency from
 * publish to committed at a steady rate.
 */
import { performance } from 'node:perf_hooks'
import mqtt, { type MqttClient } from 'mqtt'
import pg from 'pg'
import { METERS } from '../../packages/energy-data/src/catalogue/meters.ts'
import { KINDS } from '../../packages/energy-data/src/catalogue/quantities.ts'
import { senmlTopic } from '../../packages/ingest/src/service.ts'
import { BENCH_APPLICATION_PREFIX, type Contender, cpuSeconds, DRIVER_APPLICATION } from './contender.ts'

/** The estate's dataloggers and the meters each reads: a pack names only its datalogger's meters. */
const DATALOGGERS = [...new Set(METERS.map((m) => m.datalogger))].map((id) => ({
  id,
  meters: METERS.filter((m) => m.datalogger === id).map((m) => m.id as number),
}))
export const METER_IDS: readonly number[] = DATALOGGERS.flatMap((d) => d.meters)
const METER_ORDER = DATALOGGERS.flatMap((d) => d.meters.map((meter) => ({ meter, datalogger: d.id })))

/**
 * Packs published but not yet committed, at most: Mosquitto holds up to 1,000 messages
 * (max_queued_messages) for each subscriber connection, drops what comes beyond, and a fleet
 * publishing 10,000 packs at once would overrun a slow subscriber's queue.
 */
export const WINDOW_PACKS = 500
const POLL_MS = 50
/** How many slices committedCounter cuts a load's range in. */
const SLICES = 100
/** A throughput round ends without all its samples after this long without one more committed. */
const STALL_MS = 30_000
/**
 * BENCH_ROUND_SECONDS (180): a throughput measurement stops publishing after this long and is timed
 * there; what was published is then waited for (as long again at most) so that the next one starts
 * on a contender that has caught up. The latency phase waits as long at most after its last pack.
 */
const CAP_MS = Math.max(10, Number(process.env.BENCH_ROUND_SECONDS ?? 180)) * 1000
const PROBE_FROM = Date.parse('2025-02-01T00:00:00Z')

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A value inside the meter kind's plausible range (tagged `ok`, so /data/meters shows it). */
function sampleValue(meter: number, k: number): number {
  const kind = KINDS[METERS.find((m) => m.id === meter)!.kind]
  const { min, max } = kind.plausible ?? { min: 0, max: 100 }
  return Math.round((min + (max - min) * (0.3 + ((k % 101) / 100) * 0.4)) * 1000) / 1000
}

export interface Pack {
  publisher: number
  datalogger: string
  samples: number
  payload: string
}

/** A SenML pack (RFC 8428) of `[meter, epoch ms]` records: base name and base time, then relative ones. */
function senmlPack(records: ReadonlyArray<readonly [number, number]>, k0: number): string {
  const bt = Math.floor(records[0]![1] / 1000)
  return JSON.stringify(
    records.map(([meter, ms], i) => ({
      ...(i === 0 ? { bn: 'urn:campus:meter:', bt } : {}),
      n: String(meter),
      t: (ms - bt * 1000) / 1000,
      v: sampleValue(meter, k0 + i),
    })),
  )
}

export interface Fleet {
  readonly size: number
  dataloggerOf(publisher: number): (typeof DATALOGGERS)[number]
  publish(topicRoot: string, pack: Pack): Promise<unknown>
  end(): Promise<void>
}

/**
 * `size` publishers, each a datalogger's connection: publisher p sends for datalogger p mod D (the
 * estate has D of them, so several publishers share one datalogger's topic and meters).
 */
export async function startFleet(
  mqttUrl: string | readonly string[],
  publishers: number,
  run: string,
  /** A broker of its own (the cluster's nodes, taken in turn), its credential, MQTT 3.1.1. */
  credential?: { username: string; password: string },
): Promise<Fleet> {
  // every datalogger has one at least
  const size = Math.max(publishers, DATALOGGERS.length)
  const urls = typeof mqttUrl === 'string' ? [mqttUrl] : mqttUrl
  const clients: MqttClient[] = []
  try {
    for (let p = 0; p < size; p++) {
      clients.push(
        await mqtt.connectAsync(urls[p % urls.length] as string, {
          clientId: `b${run}pub${p}`,
          ...(credential ? { ...credential, protocolVersion: 4 as const } : {}),
        }),
      )
    }
  } catch (error) {
    await Promise.all(clients.map((c) => c.endAsync()))
    throw error
  }
  return {
    size,
    dataloggerOf: (p) => DATALOGGERS[p % DATALOGGERS.length]!,
    publish: (root, pack) =>
      clients[pack.publisher]!.publishAsync(senmlTopic(pack.datalogger, root), pack.payload, { qos: 1 }),
    end: async () => {
      await Promise.all(clients.map((c) => c.endAsync()))
    },
  }
}

export interface Range {
  fromMs: number
  toMs: number
}

/** The samples of one throughput round: packs for the fleet, the same rows as CSV for the COPY. */
export interface Load {
  samples: number
  packSize: number
  range: Range
  packs: Pack[]
  csv: string
  /** The range cut in slices of `sliceMs`, and the samples each holds (for counting what is committed). */
  sliceMs: number
  perSlice: number[]
}

/**
 * `samples` samples from `fromMs` on, a second apart for each meter of the estate in turn, in packs
 * of `packSize` records of one datalogger's meters, in the order of their first instant, each
 * datalogger's packs dealt to its publishers in turn.
 */
export function throughputLoad(fleet: Fleet, samples: number, packSize: number, fromMs: number): Load {
  const byDatalogger = new Map<string, Array<readonly [number, number]>>()
  const csv: string[] = []
  for (let k = 0; k < samples; k++) {
    const { meter, datalogger } = METER_ORDER[k % METER_ORDER.length]!
    const ms = fromMs + Math.floor(k / METER_ORDER.length) * 1000
    const records = byDatalogger.get(datalogger) ?? []
    records.push([meter, ms])
    byDatalogger.set(datalogger, records)
  }
  const packs: Array<Pack & { first: number }> = []
  for (const [datalogger, records] of byDatalogger) {
    const publishers = Array.from({ length: fleet.size }, (_, p) => p).filter(
      (p) => fleet.dataloggerOf(p).id === datalogger,
    )
    for (let i = 0; i < records.length; i += packSize) {
      const slice = records.slice(i, i + packSize)
      packs.push({
        publisher: publishers[(i / packSize) % publishers.length]!,
        datalogger,
        samples: slice.length,
        payload: senmlPack(slice, i),
        first: slice[0]![1],
      })
      slice.forEach(([meter, ms], j) => {
        csv.push(`${meter},${new Date(ms).toISOString()},value,${sampleValue(meter, i + j)}`)
      })
    }
  }
  packs.sort((a, b) => a.first - b.first)
  const last = fromMs + Math.ceil(samples / METER_ORDER.length) * 1000
  const sliceMs = Math.ceil((last - fromMs) / SLICES / 1000) * 1000
  const perSlice = Array.from({ length: Math.ceil((last - fromMs) / sliceMs) }, () => 0)
  for (let k = 0; k < samples; k++) perSlice[Math.floor((Math.floor(k / METER_ORDER.length) * 1000) / sliceMs)]!++
  return {
    samples,
    packSize,
    range: { fromMs, toMs: last },
    packs,
    csv: `${csv.join('\n')}\n`,
    sliceMs,
    perSlice,
  }
}

/**
 * Counts what a contender has committed of `load`, cheaply enough to ask every 50 ms: slice by slice
 * of the load's range, never again a leading slice found whole (a count of the whole range reads
 * every row each time: 60 ms for 190,000 rows here, a good part of a core at that pace).
 */
function committedCounter(w: Watch, load: Load): () => Promise<number> {
  let whole = 0
  let wholeSamples = 0
  return async () => {
    const counts = await w.slots(
      load.range.fromMs,
      load.range.fromMs + whole * load.sliceMs,
      load.range.toMs,
      load.sliceMs,
    )
    while (whole < load.perSlice.length && counts.get(whole) === load.perSlice[whole])
      wholeSamples += load.perSlice[whole++]!
    let partial = 0
    for (const [slice, n] of counts) if (slice >= whole) partial += n
    return wholeSamples + partial
  }
}

/** The days one round's samples span (a new stretch each round and pack size). */
export const stretchDays = (samples: number): number => Math.ceil(samples / METER_ORDER.length / 86_400) + 1

/**
 * The bench's own connection to a contender's database: counts its rows, and the CPU time of the
 * backends of its connections (pg_stat_activity names their pids; /proc their CPU).
 */
export interface Watch {
  count(range: Range): Promise<number>
  /** Rows in [fromMs, toMs) per slot of `slotMs` counted from `baseMs` (the latency phase's packs). */
  slots(baseMs: number, fromMs: number, toMs: number, slotMs: number): Promise<Map<number, number>>
  backends(): Promise<number[]>
  close(): Promise<void>
}

export async function watch(contender: Contender): Promise<Watch> {
  const client = new pg.Client({ connectionString: contender.databaseUrl, application_name: DRIVER_APPLICATION })
  await client.connect()
  const table = contender.table
  return {
    count: async ({ fromMs, toMs }) => {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from ${table} where meter_id = any($1::int[]) and at >= $2 and at < $3`,
        [METER_IDS, new Date(fromMs), new Date(toMs)],
      )
      return rows[0]!.n
    },
    slots: async (baseMs, fromMs, toMs, slotMs) => {
      const { rows } = await client.query<{ slot: number; n: number }>(
        `select floor((extract(epoch from at) * 1000 - $2::numeric) / $5::numeric)::int as slot, count(*)::int as n
         from ${table} where meter_id = any($1::int[]) and at >= $3 and at < $4 group by 1`,
        [METER_IDS, baseMs, new Date(fromMs), new Date(toMs), slotMs],
      )
      return new Map(rows.map((r) => [r.slot, r.n]))
    },
    backends: async () => {
      const { rows } = await client.query<{ pid: number }>(
        `select pid from pg_stat_activity
         where datname = current_database() and backend_type = 'client backend' and application_name not like $1`,
        [`${BENCH_APPLICATION_PREFIX}%`],
      )
      return rows.map((r) => r.pid)
    },
    close: () => client.end(),
  }
}

/**
 * CPU seconds of a contender's process and of its backends from now on: `sample` reads the backends
 * of the moment (one that appeared since counts from 0; one gone keeps its last reading).
 */
function cpuMeter(pid: number | undefined, backends: number[]) {
  const processStart = pid ? cpuSeconds(pid) : 0
  const baseline = new Map(backends.map((b) => [b, cpuSeconds(b)]))
  const last = new Map<number, number>()
  return {
    sample(now: number[]): void {
      for (const b of now) {
        if (!baseline.has(b)) baseline.set(b, 0)
        const seconds = cpuSeconds(b)
        if (seconds > 0) last.set(b, seconds)
      }
    },
    process: (): number => (pid ? cpuSeconds(pid) - processStart : Number.NaN),
    database: (): number => [...last].reduce((sum, [b, seconds]) => sum + seconds - (baseline.get(b) ?? 0), 0),
  }
}

/** Resolves once the contender commits a probe pack published on its topic root (it is subscribed and writing). */
export async function untilTaking(fleet: Fleet, contender: Contender, w: Watch, timeoutMs = 60_000): Promise<void> {
  const probes = { fromMs: PROBE_FROM, toMs: PROBE_FROM + 86_400_000 }
  const before = await w.count(probes)
  const deadline = Date.now() + timeoutMs
  for (let seq = 0; Date.now() < deadline; seq++) {
    await probe(fleet, contender, seq)
    for (let i = 0; i < 20; i++) {
      if ((await w.count(probes)) > before) return
      await sleep(50)
    }
  }
  throw new Error(`${contender.name} committed no probe pack within ${timeoutMs / 1000} s`)
}

let probeSeq = 1_000_000
/** One sample of the chillers' datalogger on its topic, at an instant of the probes' day of its own. */
function probe(fleet: Fleet, contender: Contender, seq = probeSeq++): Promise<unknown> {
  const publisher = [...Array(fleet.size).keys()].find((p) => fleet.dataloggerOf(p).id === 'DL-CF-01') ?? 0
  const payload = senmlPack([[910, PROBE_FROM + (seq % 86_400) * 1000]], seq)
  return fleet.publish(contender.topicRoot!, { publisher, datalogger: 'DL-CF-01', samples: 1, payload })
}

export interface Throughput {
  /** Seconds from the first publish (or psql's start) to the poll that found every sample committed (or to the cap). */
  seconds: number
  /** Samples committed within `seconds`. */
  timed: number
  /** Samples published (all of the load, unless the cap stopped the publishing), and committed in the end. */
  published: number
  committed: number
  /** True: no progress for STALL_MS, short of what was published. */
  stalled: boolean
  /** True: BENCH_ROUND_SECONDS passed before every sample was committed. */
  capped: boolean
  processCpu: number
  databaseCpu: number
}

export async function measureThroughput(fleet: Fleet, contender: Contender, w: Watch, load: Load): Promise<Throughput> {
  if (contender.load) {
    const loaded = await contender.load(load.csv)
    const committed = await w.count(load.range)
    return { ...loaded, timed: committed, published: load.samples, committed, stalled: false, capped: false }
  }
  const cpu = cpuMeter(contender.pid, await w.backends())
  const count = committedCounter(w, load)
  const started = performance.now()
  let committed = 0
  let progressAt = started
  let finishedAt: number | undefined
  let stalled = false
  let capped = false
  let wake: (() => void) | undefined
  let polled = false
  const polling = (async () => {
    try {
      while (finishedAt === undefined && !stalled) {
        const asked = performance.now()
        const n = await count()
        cpu.sample(await w.backends())
        if (n !== committed) {
          committed = n
          progressAt = asked
        }
        if (n >= load.samples) finishedAt = asked
        else if (asked - progressAt > STALL_MS) stalled = true
        else if (asked - started > CAP_MS) {
          capped = true
          finishedAt = asked
        }
        wake?.()
        if (finishedAt === undefined && !stalled) await sleep(POLL_MS)
      }
    } finally {
      polled = true
      wake?.()
    }
  })()
  // a failed count stops the publishing below and is thrown where `polling` is awaited
  polling.catch(() => {})
  const acknowledged: Array<Promise<unknown>> = []
  let published = 0
  for (const pack of load.packs) {
    while (published - committed >= WINDOW_PACKS * load.packSize && !polled) {
      await new Promise<void>((resolve) => {
        wake = resolve
      })
    }
    if (polled) break
    acknowledged.push(fleet.publish(contender.topicRoot!, pack))
    published += pack.samples
  }
  await Promise.all(acknowledged)
  await polling
  // stalled: timed to its last progress, or (nothing committed) to the moment it was given up
  const end = finishedAt ?? (committed > 0 ? progressAt : performance.now())
  const timed = committed
  const processCpu = cpu.process()
  const databaseCpu = cpu.database()
  // the whole range counted again: what the table holds, once what was published is in (or stalls)
  let final = await w.count(load.range)
  for (let last = final, at = performance.now(); capped && final < published; ) {
    await sleep(500)
    final = await w.count(load.range)
    if (final !== last) [last, at] = [final, performance.now()]
    if (performance.now() - at > STALL_MS || performance.now() - end > CAP_MS) break
  }
  return {
    seconds: (end - started) / 1000,
    timed,
    published,
    committed: final,
    stalled,
    capped,
    processCpu,
    databaseCpu,
  }
}

/**
 * Publishes the round's first packs again (as a broker redelivers them), then a probe; once the
 * probe is committed and a second more has passed: the rows the round's range gained (0 when the
 * contender stores each sample once).
 */
export async function redeliveryAdds(fleet: Fleet, contender: Contender, w: Watch, load: Load): Promise<number> {
  const probes = { fromMs: PROBE_FROM, toMs: PROBE_FROM + 86_400_000 }
  const before = await w.count(load.range)
  const probesBefore = await w.count(probes)
  await Promise.all(load.packs.slice(0, 10).map((p) => fleet.publish(contender.topicRoot!, p)))
  await probe(fleet, contender)
  const deadline = Date.now() + 30_000
  while ((await w.count(probes)) <= probesBefore && Date.now() < deadline) await sleep(POLL_MS)
  await sleep(1000)
  return (await w.count(load.range)) - before
}

export interface Latency {
  /** Milliseconds from publish to committed, per pack committed, in order of publishing. */
  committed: number[]
  /** The same to visible in `visibleSamples` (ours: /data/meters), when given. */
  visible: number[]
  packs: number
}

const SLOT_MS = 40
/** The latency phases' instants lie before this, each phase's span of its own, back to back. */
const LATENCY_ORIGIN = Math.floor(Date.now() / 1000) * 1000 - 60_000

/**
 * `seconds` at 1,000 samples/s: a pack of 10 records every 10 ms, from the fleet's publishers in
 * turn. Pack j holds instants in its own 40 ms slot (each meter's 2 ms apart inside it), so a poll
 * names the packs committed; the slots of `phase` (0, 1, ...) lie in the recent past, before those
 * of the phase before, never written twice.
 */
export async function measureLatency(
  fleet: Fleet,
  contender: Contender,
  w: Watch,
  seconds: number,
  phase: number,
  visibleSamples?: (range: Range) => Promise<number>,
): Promise<Latency> {
  const total = seconds * 100
  const span = total * SLOT_MS
  const base = LATENCY_ORIGIN - (phase + 1) * (span + 1000)
  const range = { fromMs: base, toMs: base + span }
  const visibleBefore = visibleSamples ? await visibleSamples(range) : 0
  const sentAt: number[] = []
  const committedAt = new Map<number, number>()
  const visible: number[] = []
  let sending = true
  let lastSent = performance.now()
  // until every pack is seen, or STALL_MS after the last one was sent and the last one seen, CAP_MS at most
  const waiting = (seen: number, seenAt: number) =>
    sending ||
    (seen < total &&
      performance.now() - Math.max(lastSent, seenAt) <= STALL_MS &&
      performance.now() - lastSent <= CAP_MS)
  const pollCommitted = (async () => {
    let first = 0
    let seenAt = 0
    while (waiting(committedAt.size, seenAt)) {
      const slots = await w.slots(base, base + first * SLOT_MS, range.toMs, SLOT_MS)
      const now = performance.now()
      for (const [slot, n] of slots) {
        if (n < 10 || slot >= sentAt.length || committedAt.has(slot)) continue
        committedAt.set(slot, now - sentAt[slot]!)
        seenAt = now
      }
      while (committedAt.has(first)) first++
      await sleep(10)
    }
  })()
  const pollVisible = (async () => {
    if (!visibleSamples) return
    let seenAt = 0
    while (waiting(visible.length, seenAt)) {
      const n = (await visibleSamples(range)) - visibleBefore
      const now = performance.now()
      // in publishing order: the first n / 10 packs are taken as visible
      while (visible.length < sentAt.length && n >= (visible.length + 1) * 10) {
        visible.push(now - sentAt[visible.length]!)
        seenAt = now
      }
      await sleep(10)
    }
  })()
  // a failed poll is thrown where they are awaited, after the sending
  pollCommitted.catch(() => {})
  pollVisible.catch(() => {})
  const begin = performance.now()
  for (let j = 0; j < total; j++) {
    await sleep(Math.max(0, begin + j * 10 - performance.now()))
    const publisher = j % fleet.size
    const { id, meters } = fleet.dataloggerOf(publisher)
    const slot = base + j * SLOT_MS
    const records = Array.from(
      { length: 10 },
      (_, r) => [meters[r % meters.length]!, slot + 2 + 2 * Math.floor(r / meters.length)] as const,
    )
    sentAt.push(performance.now())
    fleet
      .publish(contender.topicRoot!, { publisher, datalogger: id, samples: 10, payload: senmlPack(records, j) })
      .catch((error: Error) => process.stderr.write(`publish failed: ${error.message}\n`))
    lastSent = performance.now()
  }
  sending = false
  await Promise.all([pollCommitted, pollVisible])
  return {
    committed: [...committedAt.keys()].sort((a, b) => a - b).map((j) => committedAt.get(j)!),
    visible,
    packs: total,
  }
}
