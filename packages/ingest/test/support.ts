import { createApiKey, type EnergyDatabase, seedEstate } from '@campus/energy-data/live'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import type { FastifyInstance } from 'fastify'
import { buildIngestApp, type IngestAppOptions } from '../src/app.ts'
import { DEFAULT_IN_FLIGHT_MB, DEFAULT_WRITERS } from '../src/config.ts'
import { startConsumer } from '../src/consumer.ts'
import { HeldBytes } from '../src/held-bytes.ts'
import { ingestMetrics } from '../src/metrics.ts'
import type { Subscriber } from '../src/mqtt-session.ts'
import { ingestService } from '../src/service.ts'
import { writerReadiness } from '../src/writer.ts'
import { WriterLanes } from '../src/writer-lanes.ts'

export const MINUTE = 60_000
export const QUARTER = 15 * MINUTE
/** A window two days back, on a quarter hour: every meter installed, nothing in the future. */
export const BASE = Math.floor((Date.now() - 2 * 24 * 60 * MINUTE) / QUARTER) * QUARTER

/** A fresh energy database holding the estate's metadata (and one quarter hour of 2024), and two keys. */
export async function ingestDatabase(): Promise<{
  database: TestDatabase<EnergyDatabase>
  writeKey: string
  readKey: string
}> {
  const database = await createTestDatabase<EnergyDatabase>('ingest', ingestService.migrationsDir)
  const from = Date.parse('2024-01-01T00:00:00Z')
  await seedEstate(database.pool, { fromMs: from, toMs: from + QUARTER, seed: 1 })
  const write = await createApiKey(database.db, { name: 'gateway', endpoints: ['/ingest/*'] })
  const read = await createApiKey(database.db, { name: 'everything-read', endpoints: ['*'] })
  return { database, writeKey: write.key, readKey: read.key }
}

export interface Ingest {
  app: FastifyInstance
  writer: WriterLanes
  subscriber: Subscriber | undefined
  shared: boolean
  metrics: ReturnType<typeof ingestMetrics>
  stop: () => Promise<void>
}

/** The limits of the tests' ingest: the service's defaults. */
export const TEST_LIMITS = { maxFutureMs: 5 * MINUTE, maxAgeMs: 30 * 24 * 60 * MINUTE, maxBytes: 1_048_576 }

/** The ingest service in this process: its HTTP app, and its consumer when a broker is given. */
export async function startIngest(
  database: TestDatabase<EnergyDatabase>,
  broker?: { url: string; clientId: string; group?: string; root: string; username?: string; password?: string },
  options: {
    failedAuthLimit?: number
    limits?: Partial<typeof TEST_LIMITS>
    stallMs?: number
    app?: Pick<IngestAppOptions, 'metricsToken' | 'trustedProxies' | 'credentialLimit'>
  } = {},
): Promise<Ingest> {
  let writer: WriterLanes | undefined
  const inFlight = new HeldBytes(DEFAULT_IN_FLIGHT_MB * 1_048_576)
  const metrics = ingestMetrics(
    () => writer?.held ?? 0,
    () => inFlight.bytes(),
  )
  const limits = { ...TEST_LIMITS, ...options.limits }
  const quiet = { warn: () => undefined, info: () => undefined }
  writer = new WriterLanes(
    database.pool,
    {
      batchMessages: 100,
      batchSamples: 20_000,
      batchMs: 0,
      limits,
      stallMs: options.stallMs ?? 60_000,
      metrics,
      log: quiet,
    },
    DEFAULT_WRITERS,
  )
  const held = writer
  const app = await buildIngestApp({
    database,
    metrics,
    writer: held,
    maxBodyBytes: limits.maxBytes,
    inFlight,
    readiness: { writer: writerReadiness(held) },
    ...(options.failedAuthLimit ? { failedAuthLimit: options.failedAuthLimit } : {}),
    ...options.app,
  })
  const subscriber = broker
    ? await startConsumer({
        url: broker.url,
        clientId: broker.clientId,
        username: broker.username,
        password: broker.password,
        shareGroup: broker.group ?? 'ingest-test',
        sessionSeconds: 60,
        keepaliveSeconds: 30,
        inFlight: 100,
        inFlightBytes: inFlight,
        maxMessageBytes: limits.maxBytes,
        topicRoot: broker.root,
        writer: held,
        onMessage: () => metrics.messages.inc({ transport: 'mqtt' }),
        log: quiet,
      })
    : undefined
  return {
    app,
    writer: held,
    subscriber,
    shared: subscriber?.shared ?? false,
    metrics,
    stop: async () => {
      await held.drain()
      await subscriber?.close()
      await app.close()
    },
  }
}

/** A topic root of this test run's own: tests sharing one broker never see each other's packs. */
export const testTopicRoot = (what: string): string => `test-${what}-${process.pid}`

/** Waits until `check` holds (polling the database), or fails after `ms`. */
export async function eventually(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** The quarter statistics of what was sent, recomputed here: avg, min, max, sum, count per meter and quarter. */
export function quarterStats(samples: ReadonlyArray<{ meter: number; t: number; value: number }>) {
  const unique = new Map<string, { meter: number; t: number; value: number }>()
  for (const s of samples) if (!unique.has(`${s.meter}@${s.t}`)) unique.set(`${s.meter}@${s.t}`, s)
  const quarters = new Map<string, number[]>()
  for (const s of unique.values()) {
    const key = `${s.meter}@${Math.floor(s.t / QUARTER) * QUARTER}`
    quarters.set(key, [...(quarters.get(key) ?? []), s.value])
  }
  return new Map(
    [...quarters].map(([key, values]) => {
      const sum = values.reduce((a, b) => a + b, 0)
      return [
        key,
        { avg: sum / values.length, min: Math.min(...values), max: Math.max(...values), sum, count: values.length },
      ]
    }),
  )
}

/** data_15m's rows of these meters, keyed `meter@epoch ms`. */
export async function storedQuarters(database: TestDatabase<EnergyDatabase>, meters: number[]) {
  const { rows } = await database.pool.query<{
    meter_id: number
    time_15m: Date
    avg_value: number
    min_value: number
    max_value: number
    sum_value: number
    count_value: number
    tag: string
  }>('select * from data_15m where meter_id = any($1) and time_15m >= $2', [meters, new Date(BASE - QUARTER * 96)])
  return new Map(rows.map((r) => [`${r.meter_id}@${r.time_15m.getTime()}`, r]))
}
