import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type EnergyDatabase, seedEstate } from '@campus/energy-data/live'
import {
  createDatabase,
  type Database,
  launchService,
  migrate,
  type RunningService,
  readMigrations,
} from '@campus/shared'
import { PostgresPair, postgresPrograms, RabbitCluster, rabbitmqPrograms } from '@campus/shared/cluster'
import mqtt, { type MqttClient } from 'mqtt'
import { ingestService, senmlTopic } from '../src/service.ts'
import { QUARTER } from './support.ts'

/** Whether the machine has the programs of a real cluster; else one line says which is missing (CI installs them). */
export function clusterPrograms(what: string): boolean {
  // three broker nodes and two databases take minutes of both cores: run where asked, and in CI
  if (!process.env.CI && !process.env.TEST_CLUSTER) {
    process.stdout.write(
      `[test] ${what} skipped (TEST_CLUSTER is not set): set TEST_CLUSTER=1 to run them; CI runs them\n`,
    )
    return false
  }
  const missing = [
    rabbitmqPrograms() ? undefined : 'rabbitmq-server (apt-get install rabbitmq-server)',
    postgresPrograms() ? undefined : 'initdb (apt-get install postgresql)',
  ].filter(Boolean)
  if (missing.length === 0) return true
  if (process.env.CI) return true // CI installs them: a missing one fails there, loudly
  process.stdout.write(`[test] ${what} skipped: no ${missing.join(', no ')}; CI runs them\n`)
  return false
}

export const GATEWAY = { name: 'gateway', password: 'gateway-secret' }
export const INGEST_USER = { name: 'ingest', password: 'ingest-secret' }

export interface TestCluster {
  rabbit: RabbitCluster
  postgres: PostgresPair
  database: Database<EnergyDatabase>
  /** The AMQP URLs of every node with the ingest's credential, starting from node `first`. */
  queueUrls(first: number): string
  launchIngest(first: number, env?: Record<string, string>): Promise<RunningService>
  stop(): Promise<void>
}

/**
 * A three-node RabbitMQ cluster (MQTT plugin, the gateway and ingest users) and a PostgreSQL
 * primary (with a standby when asked), in a temporary folder, on ports of this test process's own.
 */
export async function startTestCluster(options: { standby?: boolean } = {}): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'campus-cluster-'))
  // the PostgreSQL servers run as the postgres user under root: it must reach its folder
  chmodSync(dir, 0o755)
  // below the ephemeral ports (32768 on): a port the kernel hands out meanwhile cannot take ours
  const base = 21_000 + (process.pid % 100) * 40
  const rabbit = new RabbitCluster({
    dir: join(dir, 'rabbitmq'),
    nodes: 3,
    basePort: base,
    prefix: `t${process.pid}n`,
    users: [
      { ...INGEST_USER, configure: '.*', write: '.*', read: '.*', tags: ['administrator'] },
      { ...GATEWAY, configure: '^$', write: '^amq\\.topic$', read: '^$', topicWrite: '^[^.]+\\.[^.]+\\.senml$' },
    ],
  })
  const postgres = new PostgresPair(join(dir, 'postgres'), { primary: base + 30, standby: base + 31 })
  const stopAll = async () => {
    await Promise.allSettled([rabbit.stop(), postgres.stop()])
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await Promise.all([rabbit.start(), postgres.start({ standby: options.standby ?? false })])
    await rabbit.awaitMqtt(GATEWAY)
    const database = createDatabase<EnergyDatabase>(postgres.url('primary'))
    await migrate(database.db, readMigrations(ingestService.migrationsDir))
    const from = Date.parse('2024-01-01T00:00:00Z')
    await seedEstate(database.pool, { fromMs: from, toMs: from + QUARTER, seed: 1 })
    const queueUrls = (first: number) =>
      [0, 1, 2]
        .map((k) => (first + k) % 3)
        .map((i) => `amqp://${INGEST_USER.name}:${INGEST_USER.password}@127.0.0.1:${rabbit.amqpPort(i)}`)
        .join(',')
    return {
      rabbit,
      postgres,
      database,
      queueUrls,
      launchIngest: (first, env = {}) =>
        launchService(ingestService, {
          env: {
            ENERGY_DATABASE_URL: postgres.url('primary'),
            LOG_LEVEL: 'warn',
            MIGRATE_ON_START: 'false',
            INGEST_QUEUE_URL: queueUrls(first),
            INGEST_QUEUE_PREFETCH: '200',
            ...env,
          },
          maxOutput: 200_000,
          timeoutMs: 60_000,
        }),
      stop: async () => {
        await database.close()
        await stopAll()
      },
    }
  } catch (error) {
    await stopAll()
    throw error
  }
}

export interface Sample {
  meter: number
  t: number
  value: number
}

/** Packs of `per` samples each, for these meters of one datalogger, from `t0` on, 10 s apart per meter. */
export function packsOf(datalogger: string, meters: number[], t0: number, packs: number, per: number) {
  const out: Array<{ topic: string; payload: string; samples: Sample[] }> = []
  let k = 0
  for (let p = 0; p < packs; p++) {
    const samples: Sample[] = []
    for (let i = 0; i < per; i++, k++) {
      const meter = meters[k % meters.length] as number
      samples.push({ meter, t: t0 + Math.floor(k / meters.length) * 10_000, value: 50 + ((k * 7919) % 1000) / 10 })
    }
    const payload = JSON.stringify(
      samples.map((s) => ({ n: `urn:campus:meter:${s.meter}`, t: s.t / 1000, v: s.value })),
    )
    out.push({ topic: senmlTopic(datalogger), payload, samples })
  }
  return out
}

/**
 * A datalogger (or gateway) publishing packs at QoS 1 over MQTT 3.1.1, a window of them in flight,
 * to one node of the cluster; when that node is gone it goes to the next one and publishes again
 * what was not acknowledged (as a datalogger keeps what it has not been confirmed). Returns the
 * packs acknowledged, in order.
 */
export async function publishAll(
  mqttUrls: string[],
  packs: ReadonlyArray<{ topic: string; payload: string }>,
  options: { first: number; window?: number; clientId: string; onAcked?: (n: number) => void },
): Promise<{ acked: number; reconnections: number }> {
  const window = options.window ?? 20
  let node = options.first
  let reconnections = 0
  let acked = 0
  const pending = new Set(packs.map((_, i) => i))
  while (pending.size > 0) {
    let client: MqttClient
    try {
      client = await mqtt.connectAsync(mqttUrls[node % mqttUrls.length] as string, {
        protocolVersion: 4,
        clientId: options.clientId,
        username: GATEWAY.name,
        password: GATEWAY.password,
        reconnectPeriod: 0,
        connectTimeout: 5000,
      })
    } catch {
      node++
      reconnections++
      await new Promise((r) => setTimeout(r, 200))
      continue
    }
    let lost = false
    const gone = new Promise<void>((resolve) => client.once('close', () => resolve()))
    void gone.then(() => {
      lost = true
    })
    const queue = [...pending]
    const inFlight = new Set<Promise<void>>()
    for (const i of queue) {
      if (lost) break
      const pack = packs[i] as { topic: string; payload: string }
      const sent = client
        .publishAsync(pack.topic, pack.payload, { qos: 1 })
        .then(() => {
          if (pending.delete(i)) {
            acked++
            options.onAcked?.(acked)
          }
        })
        .catch(() => undefined)
      const tracked = sent.finally(() => inFlight.delete(tracked))
      inFlight.add(tracked)
      if (inFlight.size >= window) await Promise.race([Promise.race(inFlight), gone])
    }
    await Promise.race([Promise.all(inFlight), gone])
    if (pending.size === 0) {
      await client.endAsync().catch(() => undefined)
      break
    }
    // the node went away with packs unconfirmed: the next node gets them again
    client.end(true)
    node++
    reconnections++
  }
  return { acked, reconnections }
}

/** Whether two floating sums agree to the last few digits (a fold and a recomputation add in other orders). */
export const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b))
