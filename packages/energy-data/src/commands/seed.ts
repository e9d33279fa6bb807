import { fileURLToPath } from 'node:url'
import { commandFailed, programAsTyped, usageError } from '@campus/shared'
import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type pg from 'pg'
import type { EnergyDatabase } from '../db/schema.ts'
import { DAY_MS, parseInstant } from '../domain/time.ts'
import { createApiKey, revokeApiKeys } from '../repositories/api-keys.ts'
import { listRateVersions } from '../repositories/rates.ts'
import { registerDemoRun, seedEstate } from '../seed/seed.ts'
import { DEMO_DAYS } from '../service.ts'
import { emissionsImport, tariffsImport } from './rates.ts'

function dateOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const ms = parseInstant(value)
  if (ms === undefined) throw usageError(`--${name} ${JSON.stringify(value)} is not a date (YYYY-MM-DD or ISO 8601)`)
  return ms
}

/** `seed [--from DATE] [--to DATE] [--seed N]`: default the last 400 days up to now. */
export async function seed(
  pool: pg.Pool,
  input: {
    from?: string | undefined
    to?: string | undefined
    seed?: string | undefined
    days?: number
    purpose?: 'seed' | 'demo'
  },
  log: (line: string) => void = () => {},
) {
  const toMs = dateOption('to', input.to) ?? Date.now()
  const fromMs = dateOption('from', input.from) ?? toMs - (input.days ?? DEMO_DAYS) * DAY_MS
  if (fromMs >= toMs) throw usageError('--from must be before --to')
  if (toMs - fromMs > 20 * 366 * DAY_MS) throw usageError('at most 20 years at a time')
  if (input.seed !== undefined && !/^\d+$/.test(input.seed)) throw usageError('--seed must be a non-negative integer')
  const seedValue = input.seed === undefined ? 1 : Number(input.seed)
  let lastReport = Date.now()
  return seedEstate(pool, {
    fromMs,
    toMs,
    seed: seedValue,
    purpose: input.purpose ?? 'seed',
    // the demo runs beside the live API: short transactions, so requests wait a moment at most
    commitEachChunk: input.purpose === 'demo',
    chunkDays: input.purpose === 'demo' ? 1 : 7,
    onProgress: (done) => {
      if (Date.now() - lastReport > 5000) {
        lastReport = Date.now()
        log(`seeded back to ${new Date(done).toISOString()}`)
      }
    },
  })
}

/** What the demo may do with this database: the demo run it finds, and whether real data is there. */
async function demoState(db: Kysely<EnergyDatabase>) {
  const runs = await sql<{ purpose: string; completed: boolean; from_time: Date; to_time: Date; seed: number }>`
    select purpose, completed_at is not null as completed, from_time, to_time, seed from seed_runs order by id`.execute(
    db,
  )
  const meters = await sql<{ n: number }>`select count(*)::int as n from meters`.execute(db)
  const unfinished = runs.rows.find((r) => r.purpose === 'demo' && !r.completed)
  const prepared = runs.rows.some((r) => r.purpose === 'demo' && r.completed)
  // meters without any demo run: real data (or another seed's), which the demo never touches
  const realData = !prepared && !unfinished && (meters.rows[0]?.n ?? 0) > 0
  return { unfinished, prepared, realData }
}

/** The lines that try a key at once (the API answers while the demo data is seeded). */
const tryKey = (key: string, baseUrl: string) => [
  `curl -H 'x-api-key: ${key}' '${baseUrl}/data/pv?aggregation=1%20h'`,
  `curl -H 'x-api-key: ${key}' '${baseUrl}/metadata/meters/'`,
]

/** The demo's keys: one that reads every endpoint (keys for reading never write), one a gateway posts measurements with. */
const DEMO_KEYS = {
  read: { name: 'demo', endpoints: ['*'] },
  gateway: { name: 'demo-gateway', endpoints: ['/ingest/*'] },
}

/**
 * `demo:key`: the demo's two keys, replacing earlier ones of their names, so the demo can show
 * working keys before its data is seeded: `demo` for every endpoint of the data API (reading),
 * `demo-gateway` for `POST /ingest/senml` of the ingest service. Refused on a database holding
 * real data.
 */
export async function demoKey(db: Kysely<EnergyDatabase>, pool: pg.Pool, options: { baseUrl: string; days?: number }) {
  const state = await demoState(db)
  if (state.realData) throw commandFailed('this database holds data the demo did not seed: no demo key is made for it')
  // a fresh database: the demo's run and its meters first, so the gateway key writes at once
  if (!state.prepared && !state.unfinished) {
    const toMs = Date.now()
    await registerDemoRun(pool, { fromMs: toMs - (options.days ?? DEMO_DAYS) * DAY_MS, toMs, seed: 1 })
  }
  const made: Record<string, string> = {}
  for (const [role, { name, endpoints }] of Object.entries(DEMO_KEYS)) {
    await revokeApiKeys(db, { name })
    made[role] = (await createApiKey(db, { name, endpoints })).key
  }
  const key = made.read as string
  return {
    key,
    endpoints: DEMO_KEYS.read.endpoints,
    gateway_key: made.gateway as string,
    gateway_endpoints: DEMO_KEYS.gateway.endpoints,
    try: tryKey(key, options.baseUrl),
    docs: `${options.baseUrl}/docs`,
  }
}

/**
 * `demo`: on an empty database, seed the demo window (`demo:key` makes the key).
 * Run by `pnpm start` on every start: it does nothing when meters already exist.
 */
/** The demo's rates, imported as a user imports a file: a time-of-use tariff in EUR and flat emission factors. */
const DEMO_RATES = {
  tariff: fileURLToPath(new URL('../seed/demo-tariffs.csv', import.meta.url)),
  emission: fileURLToPath(new URL('../seed/demo-emissions.csv', import.meta.url)),
}

/** The demo's tariff and emission factors, unless rates of that kind are there already. */
async function demoRates(pool: pg.Pool, zone: string) {
  const imported: Record<string, unknown> = {}
  if ((await listRateVersions(pool, 'tariff')).length === 0)
    imported.tariff = await tariffsImport(pool, DEMO_RATES.tariff, zone)
  if ((await listRateVersions(pool, 'emission')).length === 0)
    imported.emission = await emissionsImport(pool, DEMO_RATES.emission, zone)
  return imported
}

export async function demo(
  db: Kysely<EnergyDatabase>,
  pool: pg.Pool,
  options: { days: number; baseUrl: string; zone: string },
  log: (line: string) => void = () => {},
) {
  // Real data (meters without any demo run) is never touched; a demo seed that was interrupted
  // (Ctrl-C during the first start) is finished: seeding keeps the rows already present.
  const { unfinished, prepared, realData } = await demoState(db)
  if (prepared || realData) {
    return {
      demo: 'already prepared',
      hint: `Demo data is in place. Create a key with: ${programAsTyped('pnpm energy')} key:create --name me --endpoint "*"`,
      docs: `${options.baseUrl}/docs`,
    }
  }
  // before the measurements, so an interrupted first start finds them in place
  const rates = await demoRates(pool, options.zone)
  let summary: Awaited<ReturnType<typeof seed>>
  if (unfinished) {
    const begun = await sql<{ any: boolean }>`select exists (select 1 from data_15m) as any`.execute(db)
    log(
      begun.rows[0]?.any
        ? 'finishing the demo data of an interrupted first start...'
        : `seeding the demo data of ${new Date(unfinished.from_time).toISOString().slice(0, 10)} to now (the API answers meanwhile)...`,
    )
    summary = await seed(
      pool,
      {
        from: unfinished.from_time.toISOString(),
        to: unfinished.to_time.toISOString(),
        seed: String(unfinished.seed),
        purpose: 'demo',
      },
      log,
    )
    await sql`delete from seed_runs where purpose = 'demo' and completed_at is null`.execute(db)
  } else {
    log(`seeding ${options.days} days of demo data (the API answers meanwhile)...`)
    summary = await seed(pool, { days: options.days, purpose: 'demo' }, log)
  }
  return { demo: 'prepared', seeded: summary, rates, docs: `${options.baseUrl}/docs` }
}
