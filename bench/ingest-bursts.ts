/**
 * Bursts of packs of a megabyte (what a gateway flushing a backlog sends) into the ingest service,
 * its bytes in flight bounded (INGEST_IN_FLIGHT_MB 32, the default) against the same service with
 * a bound too large to bind (1,024 MB), side by side in alternating turns:
 *
 *   pnpm bench ingest-bursts                  # 40 packs of 1 MB, 3 rounds (about two minutes)
 *   BENCH_BURST=150 pnpm bench ingest-bursts  # 150 packs: past the heap the service is deployed with
 *
 * Each round publishes the burst at once (QoS 1) on a fresh database and times it until every
 * sample is committed; the ingest process's CPU and its peak resident memory (VmHWM) are read
 * from /proc. Printed: each round, the medians, the ratio of the bounded service to the other.
 */
import { readFileSync } from 'node:fs'
import mqtt from 'mqtt'
import pg from 'pg'
import { METERS } from '../packages/energy-data/src/catalogue/meters.ts'
import { senmlTopic } from '../packages/ingest/src/service.ts'
import { cpuSeconds } from './contenders/contender.ts'
import { startOurs } from './contenders/ours.ts'
import { median } from './support.ts'

const MQTT_URL = process.env.BENCH_MQTT_URL ?? 'mqtt://127.0.0.1:1883'
const BURST = Math.max(1, Number(process.env.BENCH_BURST ?? 40))
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
/** Records of a pack: about 1 MB with a base name and time (the service takes up to 1,048,576 bytes). */
const RECORDS = 35_000
const BOUNDS = [32, 1024] as const
const run = `${process.pid % 100_000}`
const line = (text: string) => process.stdout.write(`${text}\n`)
const meter = METERS.find((m) => m.kind === 'energy')!

function burst(fromS: number): string[] {
  return Array.from({ length: BURST }, (_, k) =>
    JSON.stringify(
      Array.from({ length: RECORDS }, (_, i) => ({
        ...(i === 0 ? { bn: 'urn:campus:meter:', bt: fromS + k * RECORDS } : {}),
        n: String(meter.id),
        t: i,
        v: 10 + (i % 7),
      })),
    ),
  )
}

const peakResidentMb = (pid: number) =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024

interface Figures {
  seconds: number
  cpu: number
  peakMb: number
}

async function measure(inFlightMb: number, round: number): Promise<Figures> {
  const ours = await startOurs(MQTT_URL, `${run}r${round}m${inFlightMb}`, { INGEST_IN_FLIGHT_MB: String(inFlightMb) })
  const client = new pg.Client({ connectionString: ours.databaseUrl })
  const publisher = await mqtt.connectAsync(MQTT_URL, { clientId: `bursts-${run}-${round}-${inFlightMb}` })
  try {
    await client.connect()
    const packs = burst(Date.parse('2025-04-01T00:00:00Z') / 1000)
    const topic = senmlTopic(meter.datalogger, ours.topicRoot!)
    const cpu0 = cpuSeconds(ours.pid!)
    const t0 = performance.now()
    await Promise.all(packs.map((p) => publisher.publishAsync(topic, p, { qos: 1 })))
    const deadline = t0 + 600_000
    for (;;) {
      const { rows } = await client.query('select count(*)::int as n from meter_samples where meter_id = $1', [
        meter.id,
      ])
      if (rows[0].n >= BURST * RECORDS) break
      if (performance.now() > deadline) throw new Error(`${rows[0].n} of ${BURST * RECORDS} samples after 600 s`)
      await new Promise((r) => setTimeout(r, 50))
    }
    return {
      seconds: (performance.now() - t0) / 1000,
      cpu: cpuSeconds(ours.pid!) - cpu0,
      peakMb: peakResidentMb(ours.pid!),
    }
  } finally {
    await publisher.endAsync()
    await client.end().catch(() => undefined)
    await ours.stop()
  }
}

const figures = new Map<number, Figures[]>(BOUNDS.map((b) => [b, []]))
line(`${BURST} packs of ${RECORDS.toLocaleString('en-US')} samples (about 1 MB) published at once, QoS 1, ${MQTT_URL}`)
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? BOUNDS : [...BOUNDS].reverse()
  const said: string[] = []
  for (const bound of order) {
    const f = await measure(bound, round)
    figures.get(bound)!.push(f)
    said.push(
      `INGEST_IN_FLIGHT_MB ${bound}: ${f.seconds.toFixed(1)} s, CPU ${f.cpu.toFixed(1)} s, peak resident ${f.peakMb.toFixed(0)} MB`,
    )
  }
  line(`   round ${round + 1}: ${said.join('; ')}`)
}
const med = (bound: number, pick: (f: Figures) => number) => median(figures.get(bound)!.map(pick))
line('| INGEST_IN_FLIGHT_MB | samples/s | seconds | CPU s | peak resident MB |')
line('|---|---|---|---|---|')
for (const bound of BOUNDS) {
  const seconds = med(bound, (f) => f.seconds)
  line(
    `| ${bound} | ${Math.round((BURST * RECORDS) / seconds).toLocaleString('en-US')} | ${seconds.toFixed(1)} | ${med(bound, (f) => f.cpu).toFixed(1)} | ${med(bound, (f) => f.peakMb).toFixed(0)} |`,
  )
}
line(
  `bounded / unbounded, samples/s: ${(med(1024, (f) => f.seconds) / med(32, (f) => f.seconds)).toFixed(2)}x; peak resident: ${(med(32, (f) => f.peakMb) / med(1024, (f) => f.peakMb)).toFixed(2)}x`,
)
process.exit(0)
