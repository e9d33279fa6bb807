/**
 * Live measurements, on PostgreSQL and the machine's Mosquitto (BENCH_MQTT_URL, default
 * mqtt://127.0.0.1:1883):
 *   node --experimental-strip-types bench/ingest.ts
 *
 * Creates (and drops) its own database holding the estate's metadata, starts the ingest service
 * and the data API as their own processes, and prints side by side:
 *  1. samples per second from publish to commit, in BENCH_ROUNDS rounds (3): BENCH_SAMPLES (100,000)
 *     samples in SenML packs of BENCH_PACK (500) records, published QoS 1 on one datalogger's topic,
 *     timed from the first publish to the moment all are in `meter_samples` (through the fold, the
 *     rollups and the change notice), against the baseline: `psql \copy` of the same rows into an
 *     empty scratch table of the same columns (goal: >= 50,000 samples/s and >= 0.5x COPY);
 *  2. latency from publish to visible in /data/meters at 1,000 samples/s (a pack of 100 every
 *     100 ms, for BENCH_SECONDS, 20): p50, p99, max (goal: p99 <= 1 s).
 */
import { spawnSync } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import mqtt from 'mqtt'
import type { EnergyDatabase } from '../packages/energy-data/src/db/schema.ts'
import { createApiKey } from '../packages/energy-data/src/repositories/api-keys.ts'
import { seedEstate } from '../packages/energy-data/src/seed/seed.ts'
import { energyService } from '../packages/energy-data/src/service.ts'
import { ingestService, senmlTopic } from '../packages/ingest/src/service.ts'
import { launchService } from '../packages/shared/src/index.ts'
import { energyNodeFlags, startEnergyService } from './energy-support.ts'
import { BENCH_SERVER_URL, benchDatabase, goalLine, median } from './support.ts'

const MQTT_URL = process.env.BENCH_MQTT_URL ?? 'mqtt://127.0.0.1:1883'
const SAMPLES = Math.max(1000, Number(process.env.BENCH_SAMPLES ?? 100_000))
const PACK = Math.max(1, Number(process.env.BENCH_PACK ?? 500))
const SECONDS = Math.max(5, Number(process.env.BENCH_SECONDS ?? 20))
const ROUNDS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 3))
const line = (text: string) => process.stdout.write(`${text}\n`)
const run = `${process.pid % 100_000}`
/** A topic root of its own: nothing else on the broker reaches this database. */
const root = `bench-${run}`

async function main() {
  const database = await benchDatabase<EnergyDatabase>('ingestbench', energyService.migrationsDir, BENCH_SERVER_URL)
  const children: Array<{ kill: (s: NodeJS.Signals) => void }> = []
  try {
    const from = Date.parse('2024-01-01T00:00:00Z')
    await seedEstate(database.pool, { fromMs: from, toMs: from + 900_000, seed: 1 })
    const ingest = await launchService(ingestService, {
      env: {
        ENERGY_DATABASE_URL: database.url,
        MQTT_URL,
        MQTT_CLIENT_ID: `bench-${run}`,
        MQTT_SHARE_GROUP: `bench${run}`,
        MQTT_TOPIC_ROOT: root,
        MQTT_SESSION_SECONDS: '60',
        ...(process.env.BENCH_CONNECTIONS ? { MQTT_CONNECTIONS: process.env.BENCH_CONNECTIONS } : {}),
        LOG_LEVEL: 'warn',
        MIGRATE_ON_START: 'false',
      },
      maxOutput: 0,
      onLine: (text) => process.stderr.write(`ingest: ${text}\n`),
    })
    children.push(ingest.child)
    const publisher = await mqtt.connectAsync(MQTT_URL, { clientId: `bench-pub-${run}` })
    const count = async (where: string) =>
      Number((await database.pool.query(`select count(*) as n from meter_samples where ${where}`)).rows[0].n)

    // 1. throughput, in rounds: the chillers' datalogger, three meters, a sample a second each, a new
    // stretch of 2025 each round; then the same rows by psql \copy into an empty scratch table
    const meters = [910, 911, 912]
    await database.pool.query('create table scratch (meter_id integer, at timestamptz, reading text, value float8)')
    const ratios: number[] = []
    const rates: number[] = []
    line(
      `1. ${SAMPLES} samples in packs of ${PACK}, QoS 1 through ${MQTT_URL}, publish to commit, against psql \\copy:`,
    )
    for (let round = 0; round < ROUNDS; round++) {
      const t0 = Date.parse('2025-03-01T00:00:00Z') + round * 10 * 86_400_000
      const rows: Array<[number, number, number]> = []
      for (let k = 0; k < SAMPLES; k++) rows.push([meters[k % 3]!, t0 + Math.floor(k / 3) * 1000, 100 + (k % 977) / 7])
      const packs: string[] = []
      for (let k = 0; k < rows.length; k += PACK) {
        packs.push(
          JSON.stringify(rows.slice(k, k + PACK).map(([m, t, v]) => ({ n: `urn:campus:meter:${m}`, t: t / 1000, v }))),
        )
      }
      const before = await count('meter_id in (910, 911, 912)')
      const started = performance.now()
      await Promise.all(packs.map((p) => publisher.publishAsync(senmlTopic('DL-CF-01', root), p, { qos: 1 })))
      while ((await count('meter_id in (910, 911, 912)')) < before + SAMPLES)
        await new Promise((r) => setTimeout(r, 50))
      const ingestSeconds = (performance.now() - started) / 1000

      await database.pool.query('truncate scratch')
      const csv = rows.map(([m, t, v]) => `${m},${new Date(t).toISOString()},value,${v}`).join('\n')
      const copyStarted = performance.now()
      const copy = spawnSync('psql', [database.url, '-q', '-c', '\\copy scratch from stdin with (format csv)'], {
        input: `${csv}\n`,
        encoding: 'utf8',
      })
      const copySeconds = (performance.now() - copyStarted) / 1000
      if (copy.status !== 0) throw new Error(`psql: ${copy.stderr}`)
      rates.push(SAMPLES / ingestSeconds)
      ratios.push(copySeconds / ingestSeconds)
      line(
        `   round ${round + 1}: ingest ${Math.round(SAMPLES / ingestSeconds)} samples/s (${ingestSeconds.toFixed(2)} s); psql \\copy ${Math.round(SAMPLES / copySeconds)} samples/s (${copySeconds.toFixed(2)} s)`,
      )
    }
    line(`   ${goalLine('ingest / COPY', ratios, { atLeast: 0.5 })}`)
    line(
      `   ${goalLine(
        'samples/s / 50,000',
        rates.map((r) => r / 50_000),
        { atLeast: 1 },
      )}`,
    )

    // 2. latency at 1,000 samples/s: a pack of 100 samples of meter 933 every 100 ms, read back by /data/meters
    const energy = await startEnergyService(database.url, energyNodeFlags(undefined), { ENERGY_CACHE_MB: '0' })
    children.push(energy.child)
    const { key } = await createApiKey(database.db, { name: 'bench', endpoints: ['*'] })
    const begin = Date.now()
    const window = `ids=933&start_datetime=${new Date(begin - 900_000).toISOString()}&end_datetime=${new Date(begin + (SECONDS + 60) * 1000).toISOString()}`
    const sentAt: number[] = []
    let seen = 0
    const latencies: number[] = []
    let sending = true
    const poll = (async () => {
      while (sending || seen < sentAt.length) {
        const res = await fetch(`${energy.base}/data/meters?${window}`, { headers: { 'x-api-key': key } })
        const body = (await res.json()) as Array<{ count_value: number }>
        const visible = body.reduce((a, r) => a + r.count_value, 0)
        const now = performance.now()
        while (seen < sentAt.length && visible >= (seen + 1) * 100) latencies.push(now - sentAt[seen++]!)
        await new Promise((r) => setTimeout(r, 10))
      }
    })()
    for (let i = 0; i < SECONDS * 10; i++) {
      const due = begin + i * 100
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())))
      const records = Array.from({ length: 100 }, (_, j) => ({
        n: 'urn:campus:meter:933',
        t: (due + j) / 1000,
        v: 40 + j / 10,
      }))
      sentAt.push(performance.now())
      void publisher.publishAsync(senmlTopic('DL-EC-01', root), JSON.stringify(records), { qos: 1 })
    }
    sending = false
    await poll
    latencies.sort((a, b) => a - b)
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!
    line(`2. ${SECONDS} s at 1,000 samples/s (packs of 100 every 100 ms), publish to visible in /data/meters:`)
    line(
      `   p50 ${median(latencies).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${latencies.at(-1)!.toFixed(0)} ms over ${latencies.length} packs`,
    )
    line(`   ${goalLine('1 s / p99', [1000 / p99], { atLeast: 1 })}`)
    await publisher.endAsync()
  } finally {
    for (const c of children) c.kill('SIGTERM')
    await database.close()
  }
}

await main()
