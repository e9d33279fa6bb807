/**
 * Reads from a streaming standby (ENERGY_READ_DATABASE_URL), on real servers: a PostgreSQL primary
 * and its standby made by pg_basebackup, of the test's own. The standby's replay is paused to make
 * it lag as long as the test needs: its lag in /metrics, readiness past the bound, and the window
 * cache, whose change notice then arrives long before the standby has the change.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDatabase, type Database, migrate, readMigrations } from '@campus/shared'
import { PostgresPair, postgresPrograms } from '@campus/shared/cluster'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import { defaultSettings } from '../src/config.ts'
import type { EnergyDatabase } from '../src/db/schema.ts'
import { notifyMeasurementsChanged } from '../src/repositories/measurement-changes.ts'
import { inTransaction } from '../src/repositories/transaction.ts'
import { energyService } from '../src/service.ts'
import { apiKey } from './harness.ts'

const onServers = postgresPrograms() !== undefined || process.env.CI !== undefined
if (!onServers)
  process.stdout.write('[test] standby reads skipped: no initdb (apt-get install postgresql); CI runs them\n')

const DAY = '2025-06-01'
const NOON = Date.parse(`${DAY}T12:00:00Z`)
const path = `/data/pv?start_datetime=${DAY}T00:00:00Z&end_datetime=${DAY}T23:45:00Z`

describe.runIf(onServers)('reads from a streaming standby', () => {
  const dir = mkdtempSync(join(tmpdir(), 'energy-standby-'))
  const base = 26_000 + (process.pid % 500) * 2
  let pair: PostgresPair
  let primary: Database<EnergyDatabase>
  let standby: pg.Client
  let app: Awaited<ReturnType<typeof buildApp>>
  let key: string

  beforeAll(async () => {
    // the servers run as the postgres user under root: it must reach the folder
    chmodSync(dir, 0o755)
    pair = new PostgresPair(dir, { primary: base, standby: base + 1 })
    await pair.start({ standby: true })
    primary = createDatabase<EnergyDatabase>(pair.url('primary'))
    await migrate(primary.db, readMigrations(energyService.migrationsDir))
    key = await apiKey(primary.db)
    standby = new pg.Client({ connectionString: pair.url('standby') })
    await standby.connect()
    app = await buildApp({
      database: primary,
      settings: defaultSettings({ readDatabaseUrls: [pair.url('standby')], maxReplicaLagSeconds: 1 }),
      logLevel: 'silent',
    })
    await app.ready()
  }, 120_000)

  afterAll(async () => {
    await app?.close()
    await standby?.end()
    await primary?.close()
    await pair?.stop()
    rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  const noon = async (): Promise<number | null | undefined> => {
    const response = await app.inject({ url: path, headers: { 'x-api-key': key } })
    expect(response.statusCode).toBe(200)
    const rows = response.json() as Array<{ time_15m: string; tot_pv: number | null }>
    return rows.find((r) => Date.parse(r.time_15m) === NOON)?.tot_pv
  }
  const lagMetric = async (): Promise<number> => {
    const text = (await app.inject({ url: '/metrics' })).body
    return Number(/^energy_replica_lag_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1])
  }
  const until = async (check: () => Promise<boolean>, what: string, ms = 20_000) => {
    const deadline = Date.now() + ms
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  /** A quarter hour written on the primary, with its change notice, as the write path does. */
  const write = (value: number) =>
    inTransaction(primary.pool, async (client) => {
      await client.query(
        'insert into pv_15m (time_15m, tot_pv) values ($1, $2) on conflict (time_15m) do update set tot_pv = excluded.tot_pv',
        [new Date(NOON), value],
      )
      await notifyMeasurementsChanged(client, { tables: ['pv_15m'], fromMs: NOON, toMs: NOON + 900_000 })
    })

  it('a standby in step: ready, its lag in /metrics, answers read there', async () => {
    await until(async () => (await app.inject({ url: '/health/ready' })).statusCode === 200, 'readiness')
    expect(await lagMetric()).toBeLessThan(1)
    await write(1)
    await until(async () => (await noon()) === 1, 'the standby to replay the first write')
  })

  it('a notice before the standby replays: nothing stale is cached; a lag past the bound is not ready', async () => {
    expect(await noon()).toBe(1) // cached now, or about to be
    await standby.query('select pg_wal_replay_pause()')
    const noticeAt = Date.now()
    await write(2)
    // the standby still has 1: answers read meanwhile say 1 and must not be kept
    let staleAnswers = 0
    while (Date.now() - noticeAt < 2500) {
      if ((await noon()) === 1) staleAnswers++
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(staleAnswers).toBeGreaterThan(0)
    const ready = await app.inject({ url: '/health/ready' })
    expect(ready.statusCode).toBe(503)
    expect(ready.body).toContain('lags')
    expect(await lagMetric()).toBeGreaterThan(1)
    await standby.query('select pg_wal_replay_resume()')
    await until(async () => (await noon()) === 2, 'the new value once the standby replays')
    // and it stays so: what the cache keeps now is the replayed answer
    for (let i = 0; i < 5; i++) expect(await noon()).toBe(2)
    await until(async () => (await app.inject({ url: '/health/ready' })).statusCode === 200, 'readiness again')
    process.stdout.write(
      `standby reads: ${staleAnswers} answers read from the paused standby after the notice, none cached; lag metric rose past the bound, then fell\n`,
    )
  }, 60_000)
})
