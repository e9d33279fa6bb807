/**
 * The one harness of the data API's tests: a fresh migrated database per test file holding a data
 * set (`test/fixtures/`, or the estate `pnpm energy seed` writes), the app over it (injected or
 * listening), API keys, and the service or its command line as real processes.
 */

import { type IncomingMessage, request } from 'node:http'
import { type Database, launchService, type RunningService, runServiceCommand } from '@campus/shared'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { buildApp } from '../src/app.ts'
import { seed } from '../src/commands/seed.ts'
import { defaultSettings, type EnergySettings } from '../src/config.ts'
import type { EnergyDatabase } from '../src/db/schema.ts'
import { createApiKey } from '../src/repositories/api-keys.ts'
import { measurementsWritten } from '../src/repositories/measurement-writes.ts'
import { inTransaction } from '../src/repositories/transaction.ts'
import { energyService } from '../src/service.ts'

/**
 * What a test database holds before the test starts. A data set that `kept` names is made once
 * per run and copied for each file that asks for it (`DataSet` of @campus/shared/testing).
 */
export type DataSet = ((database: TestDatabase<EnergyDatabase>) => Promise<void>) & { kept?: string }

/** The demo estate's model over a range, as `pnpm energy seed --from --to --seed` writes it (the same every time). */
export const seeded = (range: { from: string; to: string; seed: string }): DataSet =>
  Object.assign(
    async (database: TestDatabase<EnergyDatabase>) => {
      await seed(database.pool, range)
    },
    { kept: `seed ${range.from} ${range.to} ${range.seed}` },
  )

/**
 * Rows into a 15-minute table in plain parameterised INSERTs of 500 (the table is a fixture
 * constant, never input), then the write path's end (rollups, change notice), in one transaction
 * as every writer does.
 */
export async function insertRows(
  database: Database<EnergyDatabase>,
  table: keyof EnergyDatabase,
  rows: ReadonlyArray<Record<string, unknown>>,
): Promise<void> {
  const columns = Object.keys(rows[0] ?? {})
  await inTransaction(database.pool, async (client) => {
    for (let k = 0; k < rows.length; k += 500) {
      const chunk = rows.slice(k, k + 500)
      const values = chunk.map((_, r) => `(${columns.map((_c, c) => `$${r * columns.length + c + 1}`).join(', ')})`)
      await client.query(
        `insert into ${table} (${columns.join(', ')}) values ${values.join(', ')}`,
        chunk.flatMap((row) => columns.map((c) => row[c])),
      )
    }
    const times = rows.map((r) =>
      r.time_15m instanceof Date ? r.time_15m.getTime() : Date.parse(String(r.time_15m ?? Number.NaN)),
    )
    if (String(table).endsWith('_15m') && times.length && times.every(Number.isFinite)) {
      await measurementsWritten(client, {
        tables: [table],
        fromMs: Math.min(...times),
        toMs: Math.max(...times) + 900_000,
      })
    }
  })
}

/** A quarter hour of one meter, as the per-meter table holds it. */
export interface MeterReading {
  time: number
  meter: number
  avg: number
  min: number
  max: number
  sum: number
  count: number
  tag: string
}

export function insertMeterReadings(database: Database<EnergyDatabase>, readings: readonly MeterReading[]) {
  return insertRows(
    database,
    'data_15m',
    readings.map((r) => ({
      time_15m: new Date(r.time),
      meter_id: r.meter,
      avg_value: r.avg,
      min_value: r.min,
      max_value: r.max,
      sum_value: r.sum,
      count_value: r.count,
      tag: r.tag,
    })),
  )
}

/** A fresh, migrated database for this test file, holding `data`. */
export async function testDatabase(data?: DataSet): Promise<TestDatabase<EnergyDatabase>> {
  if (data?.kept) return createTestDatabase('energy', energyService.migrationsDir, { name: data.kept, fill: data })
  const database = await createTestDatabase<EnergyDatabase>('energy', energyService.migrationsDir)
  try {
    await data?.(database)
    return database
  } catch (error) {
    await database.close()
    throw error
  }
}

/** A new API key for `endpoints` (every endpoint by default). */
export async function apiKey(db: Kysely<EnergyDatabase>, endpoints: string[] = ['*'], name = 'test'): Promise<string> {
  return (await createApiKey(db, { name, endpoints })).key
}

export interface HarnessOptions {
  data?: DataSet
  /** Over the defaults of an empty environment. */
  settings?: Partial<EnergySettings>
  /** The clock of default windows. */
  now?: () => number
  /** The app's own connection to the test database (a runtime role, a proxy); closed with the harness. */
  connect?: (database: TestDatabase<EnergyDatabase>) => Promise<Database<EnergyDatabase>>
  /** Listen on a loopback port (`base`) as well as answering `app.inject`. */
  listen?: boolean
}

export interface Harness {
  database: TestDatabase<EnergyDatabase>
  db: Kysely<EnergyDatabase>
  /** The connection the app works through: the test database's own unless `connect` gave another. */
  served: Database<EnergyDatabase>
  app: FastifyInstance
  /** `http://127.0.0.1:<port>` when listening. */
  base: string
  key(endpoints?: string[], name?: string): Promise<string>
  close(): Promise<void>
}

/** A test database holding `data`, and the app over it. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const database = await testDatabase(options.data)
  const served = options.connect ? await options.connect(database) : database
  const app = await buildApp({
    database: served,
    // the alert timer evaluates once at start, then hourly: a test that wants it ticks (its
    // transaction every 5 s, beside a test's own reads on the embedded test database, broke them)
    settings: defaultSettings({
      alerts: { ...defaultSettings().alerts, evaluationMs: 3_600_000 },
      ...options.settings,
    }),
    now: options.now,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
  })
  const base = options.listen ? await app.listen({ port: 0, host: '127.0.0.1' }) : ''
  if (!options.listen) await app.ready()
  // the tests compare the levels the calendar serves: they start once it is built
  await app.rollupCalendar
  return {
    database,
    db: database.db,
    served,
    app,
    base,
    key: (endpoints, name) => apiKey(database.db, endpoints, name),
    close: async () => {
      await app.close()
      if (served !== database) await served.close()
      await database.close()
    },
  }
}

/** Heap sizing of the production service (its descriptor), unless ENERGY_TEST_NODE_FLAGS says otherwise. */
const PRODUCTION_NODE_FLAGS =
  process.env.ENERGY_TEST_NODE_FLAGS?.split(' ').filter(Boolean) ?? energyService.nodeOptions

export interface ServerProcess extends RunningService {
  /** Every line the process wrote on stdout and stderr so far. */
  logs: string[]
}

/** The service as its own process on a free loopback port, seeing only `env` of this process's variables. */
export async function startEnergyProcess(
  env: Record<string, string>,
  nodeFlags: readonly string[] = PRODUCTION_NODE_FLAGS,
): Promise<ServerProcess> {
  const logs: string[] = []
  const server = await launchService(energyService, {
    env: { LOG_LEVEL: 'info', MIGRATE_ON_START: 'false', ...env },
    inheritEnv: false,
    nodeOptions: nodeFlags,
    onLine: (line) => logs.push(line),
  })
  return { ...server, logs }
}

/** `pnpm energy ...` as an operator runs it, on the database at `url`: exit code, stdout, stderr. */
export async function energyCli(
  url: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runServiceCommand(energyService, args, {
    // as pnpm runs it: the usage lines say `pnpm energy` (npm run energy -- under npm)
    env: { ENERGY_DATABASE_URL: url, LOG_LEVEL: 'silent', MIGRATE_ON_START: '', npm_config_user_agent: 'pnpm/12.21.0' },
  })
}

export interface Download {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
  /** Whether the body arrived whole (the chunked encoding ended properly). */
  complete: boolean
  error?: string
}

/**
 * A GET read over node:http; `onChunk` may pause the response (a slow reader) and resume it.
 * Resolves in every case, saying whether the body arrived whole.
 */
export function download(
  base: string,
  target: string,
  headers: Record<string, string>,
  onChunk?: (response: IncomingMessage, received: number) => void,
): Promise<Download> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let received = 0
    const req = request(`${base}${target}`, { headers, agent: false }, (response) => {
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        received += chunk.length
        onChunk?.(response, received)
      })
      let error: string | undefined
      response.on('error', (e) => {
        error = e.message
      })
      response.on('close', () => {
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks),
          complete: response.complete,
          ...(error ? { error } : {}),
        })
      })
    })
    req.on('error', (e) =>
      resolve({ status: 0, headers: {}, body: Buffer.alloc(0), complete: false, error: e.message }),
    )
    req.end()
  })
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
