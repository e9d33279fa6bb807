import type { TestDatabase } from '@campus/shared/testing'
import { sql } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { demo, demoKey, seed } from '../src/commands/seed.ts'
import type { EnergyDatabase } from '../src/db/schema.ts'
import { seedEstate } from '../src/seed/seed.ts'
import { testDatabase } from './harness.ts'

let database: TestDatabase<EnergyDatabase>
const options = { days: 2, baseUrl: 'http://127.0.0.1:8000', zone: 'Europe/Rome' }

async function count(table: string): Promise<number> {
  const result = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(database.db)
  return result.rows[0]?.n ?? 0
}

beforeAll(async () => {
  database = await testDatabase()
})
afterAll(async () => database?.close())
beforeEach(async () => {
  await sql`truncate seed_runs, api_keys, data_15m, pv_15m, water_15m, weather_15m, aulep_15m,
    centrali_frigo_15m, datacenter_1_15m, meter_samples, quarantine, meters, dataloggers, rate_versions cascade`.execute(
    database.db,
  )
})

describe('demo (run by pnpm start on every start)', () => {
  it('seeds an empty database once and records the run', async () => {
    const first = await demo(database.db, database.pool, options)
    expect(first.demo).toBe('prepared')
    expect(await count('pv_15m')).toBeGreaterThan(150)
    const runs = await sql<{ purpose: string; done: boolean }>`
      select purpose, completed_at is not null as done from seed_runs`.execute(database.db)
    expect(runs.rows).toEqual([{ purpose: 'demo', done: true }])
    // a tariff and emission factors, so costs and CO2 answer from the first start
    const rates = async () =>
      (
        await sql<{ kind: string; file: string; currency: string | null }>`
        select kind, file, currency from rate_versions order by id`.execute(database.db)
      ).rows
    expect(await rates()).toEqual([
      { kind: 'tariff', file: 'demo-tariffs.csv', currency: 'EUR' },
      { kind: 'emission', file: 'demo-emissions.csv', currency: null },
    ])

    const rows = await count('data_15m')
    const second = await demo(database.db, database.pool, options)
    expect(second.demo).toBe('already prepared')
    expect(await count('data_15m')).toBe(rows)
    expect(await count('api_keys')).toBe(0)
    expect(await rates()).toHaveLength(2)
  })

  it('demo:key makes a key for every endpoint and a gateway key for /ingest/ before any data, replacing the previous ones', async () => {
    const first = await demoKey(database.db, database.pool, options)
    expect(first.key).toMatch(/^edk_/)
    expect(first.endpoints).toEqual(['*'])
    expect(first.gateway_key).toMatch(/^edk_/)
    expect(first.gateway_endpoints).toEqual(['/ingest/*'])
    expect(first.try[0]).toContain(first.key)
    const second = await demoKey(database.db, database.pool, options)
    const keys = await sql<{ name: string; revoked: boolean }>`
      select name, revoked_at is not null as revoked from api_keys order by id`.execute(database.db)
    expect(keys.rows).toEqual([
      { name: 'demo', revoked: true },
      { name: 'demo-gateway', revoked: true },
      { name: 'demo', revoked: false },
      { name: 'demo-gateway', revoked: false },
    ])
    expect(second.key).not.toBe(first.key)
    expect(second.gateway_key).not.toBe(first.gateway_key)
    // the estate's meters are there before its data, so the gateway key writes at once;
    // the demo then seeds the run the key recorded
    expect(await count('meters')).toBeGreaterThan(20)
    expect(await count('data_15m')).toBe(0)
    expect((await demo(database.db, database.pool, options)).demo).toBe('prepared')
    expect(await count('data_15m')).toBeGreaterThan(0)
    const runs = await sql<{ done: boolean }>`
      select completed_at is not null as done from seed_runs where purpose = 'demo'`.execute(database.db)
    expect(runs.rows).toEqual([{ done: true }])
  })

  it('never adds demo data to a database holding real data', async () => {
    await sql`insert into dataloggers (id, serial, ip) values ('dl-1', 'S1', '10.0.0.1')`.execute(database.db)
    await sql`insert into meters (id, description, datalogger_id) values (1, '1) Real meter', 'dl-1')`.execute(
      database.db,
    )
    const result = await demo(database.db, database.pool, options)
    expect(result.demo).toBe('already prepared')
    expect(await count('pv_15m')).toBe(0)
    await expect(demoKey(database.db, database.pool, options)).rejects.toThrow('holds data the demo did not seed')
    expect(await count('api_keys')).toBe(0)
  })

  it('finishes a demo seed that an interrupted first start left half done', async () => {
    const to = new Date('2026-01-10T00:00:00Z')
    const from = new Date('2026-01-08T00:00:00Z')
    // what a complete run of that window holds, for comparison
    await seed(database.pool, { from: from.toISOString(), to: to.toISOString(), purpose: 'demo' })
    const complete = await count('data_15m')
    await sql`truncate seed_runs, data_15m, pv_15m, water_15m, weather_15m, aulep_15m, centrali_frigo_15m,
      datacenter_1_15m`.execute(database.db)
    // the interrupted state: the run started, metadata and some of the data committed
    await sql`insert into seed_runs (seed, from_time, to_time, purpose) values (1, ${from}, ${to}, 'demo')`.execute(
      database.db,
    )
    await seed(database.pool, { from: from.toISOString(), to: '2026-01-09T00:00:00Z', purpose: 'seed' })
    expect(await count('data_15m')).toBeLessThan(complete)

    const result = await demo(database.db, database.pool, options)
    expect(result.demo).toBe('prepared')
    expect(await count('data_15m')).toBe(complete)
    const runs = await sql<{ done: boolean }>`
      select completed_at is not null as done from seed_runs where purpose = 'demo'`.execute(database.db)
    expect(runs.rows).toEqual([{ done: true }])
  })

  it('writes the newest day first, so the latest data answers while older days are still seeded', async () => {
    const toMs = Date.parse('2026-01-10T00:00:00Z')
    const fromMs = Date.parse('2026-01-07T00:00:00Z')
    const newestQuarter = new Date(toMs - 15 * 60_000)
    const seenAtEachCommit: Array<{ backTo: string }> = []
    let newestPresent: Promise<number> | undefined
    await seedEstate(database.pool, {
      fromMs,
      toMs,
      seed: 1,
      chunkDays: 1,
      commitEachChunk: true,
      onProgress: (backTo) => {
        seenAtEachCommit.push({ backTo: new Date(backTo).toISOString() })
        // after the first commit, read on another connection: the newest quarter hour is there
        newestPresent ??= sql<{ n: number }>`
          select count(*)::int as n from pv_15m where time_15m = ${newestQuarter}`
          .execute(database.db)
          .then((r) => r.rows[0]?.n ?? 0)
      },
    })
    expect(seenAtEachCommit).toEqual([
      { backTo: '2026-01-09T00:00:00.000Z' },
      { backTo: '2026-01-08T00:00:00.000Z' },
      { backTo: '2026-01-07T00:00:00.000Z' },
    ])
    expect(await newestPresent).toBe(1)
  })
})
