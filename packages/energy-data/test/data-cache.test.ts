/**
 * The cache of answers for windows wholly in the past: two instances on one PostgreSQL database
 * (each hears the other's and the command line's imports through LISTEN/NOTIFY), the key check
 * made on every request, and a byte bound. A row written straight into the table (no import, so
 * no notification) is how a test sees whether an answer came from the cache.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { needsService } from '@campus/shared/testing'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import { defaultSettings } from '../src/config.ts'
import type { Exporter } from '../src/export/export.ts'
import { revokeApiKeys } from '../src/repositories/api-keys.ts'
import { energyCli, type Harness, insertRows, startHarness } from './harness.ts'

// Instances hear each other's changes through LISTEN/NOTIFY on a PostgreSQL server; on the
// embedded database the service caches nothing (plugins/exporter.ts), so there is nothing to test.
const onServer = await needsService('window cache tests (a PostgreSQL server)', 'TEST_DATABASE_URL')

const DAY = '2025-06-01'
const dayPath = (day: string) => `/data/pv?start_datetime=${day}T00:00:00Z&end_datetime=${day}T23:45:00Z`
const NOON = Date.parse(`${DAY}T12:00:00Z`)

/** One pv quarter hour, tot_pv only. */
const pvRow = (ms: number, value: number) => ({ time_15m: new Date(ms), tot_pv: value })

/** tot_pv at noon of `DAY` as `app` answers it for the whole day. */
async function noonValue(app: FastifyInstance, key: string, path = dayPath(DAY)): Promise<unknown> {
  const response = await app.inject({ url: path, headers: { 'x-api-key': key } })
  expect(response.statusCode).toBe(200)
  const rows = response.json() as Array<{ time_15m: string; tot_pv: number | null }>
  return rows.find((r) => Date.parse(r.time_15m) === NOON)?.tot_pv
}

describe.runIf(onServer)('answers of past windows, cached', () => {
  let h: Harness
  let other: FastifyInstance
  let key: string
  const dir = mkdtempSync(join(tmpdir(), 'energy-cache-'))

  beforeAll(async () => {
    // the rows are there before any instance listens: their write's notice reaches nobody, so it
    // cannot arrive late and drop an answer cached after it
    h = await startHarness({
      data: (database) =>
        insertRows(database, 'pv_15m', [pvRow(NOON - 900_000, 1), pvRow(NOON, 2), pvRow(NOON + 900_000, 3)]),
    })
    // a second instance on the same database
    other = await buildApp({ database: h.database, settings: defaultSettings(), logLevel: 'silent' })
    await other.ready()
    key = await h.key()
  })
  afterAll(async () => {
    await other?.close()
    await h?.close()
  })

  it('an import into a cached window is visible at once on both instances', async () => {
    expect([await noonValue(h.app, key), await noonValue(other, key)]).toEqual([2, 2])
    // written without an import: neither instance hears of it, both answer from their cache
    await h.database.pool.query('update pv_15m set tot_pv = 20 where time_15m = $1', [new Date(NOON)])
    expect([await noonValue(h.app, key), await noonValue(other, key)]).toEqual([2, 2])

    // the operator's command line, its own process: its commit reaches both instances
    const file = join(dir, 'pv.csv')
    writeFileSync(file, `time_15m,tot_pv\n${DAY} 12:00:00,200\n`)
    const imported = await energyCli(h.database.url, ['import', file])
    expect(imported.code).toBe(0)
    expect([await noonValue(h.app, key), await noonValue(other, key)]).toEqual([200, 200])
  })

  it('an import elsewhere keeps the answers of other windows and other tables', async () => {
    const before = await noonValue(h.app, key)
    await h.database.pool.query('update pv_15m set tot_pv = 21 where time_15m = $1', [new Date(NOON)])
    const file = join(dir, 'other.csv')
    writeFileSync(file, `time_15m,tot_pv\n2025-06-03 12:00:00,5\n`)
    expect((await energyCli(h.database.url, ['import', file])).code).toBe(0)
    // still the cached answer: the import touched 3 June only
    expect(await noonValue(h.app, key)).toBe(before)
  })

  it('a revoked key gets 401 from a cached window; another key still gets the answer', async () => {
    const doomed = await h.key(['/data/*'], 'doomed')
    expect(await noonValue(other, doomed)).toBe(await noonValue(other, key))
    await revokeApiKeys(h.db, { name: 'doomed' })
    const refused = await other.inject({ url: dayPath(DAY), headers: { 'x-api-key': doomed } })
    expect(refused.statusCode).toBe(401)
    expect(refused.json()).toEqual({ detail: 'API key revoked' })
    // and a key whose patterns do not cover /data is refused too
    const narrow = await h.key(['/metadata/*'], 'narrow')
    expect((await other.inject({ url: dayPath(DAY), headers: { 'x-api-key': narrow } })).statusCode).toBe(403)
    expect((await other.inject({ url: dayPath(DAY) })).statusCode).toBe(401)
  })

  it('a window reaching the present is read every time', async () => {
    const live = await buildApp({
      database: h.database,
      settings: defaultSettings(),
      now: () => NOON + 3_600_000,
      logLevel: 'silent',
    })
    try {
      await live.ready()
      const first = await noonValue(live, key)
      await h.database.pool.query('update pv_15m set tot_pv = tot_pv + 1 where time_15m = $1', [new Date(NOON)])
      expect(await noonValue(live, key)).toBe((first as number) + 1)
    } finally {
      await live.close()
    }
  })
})

describe.runIf(onServer)('the cache is bounded in bytes', () => {
  let h: Harness
  let key: string
  const LIMIT = 256 * 1024
  const DAYS = Array.from({ length: 12 }, (_, i) => `2025-07-${String(i + 1).padStart(2, '0')}`)

  beforeAll(async () => {
    // every quarter hour of twelve days: a day's JSON is over 30 kB, twelve are beyond the limit
    // (written before the instance listens, as above)
    const start = Date.parse(`${DAYS[0]}T00:00:00Z`)
    h = await startHarness({
      settings: { cacheBytes: LIMIT },
      data: (database) =>
        insertRows(
          database,
          'pv_15m',
          Array.from({ length: 96 * DAYS.length }, (_, q) => pvRow(start + q * 900_000, q)),
        ),
    })
    key = await h.key()
  })
  afterAll(async () => h?.close())

  it('holds at most ENERGY_CACHE_MB of answers, dropping the least recently used', async () => {
    const exporter = (h.app as unknown as { exporter: Exporter }).exporter
    let largest = 0
    for (const day of DAYS) {
      const response = await h.app.inject({ url: dayPath(day), headers: { 'x-api-key': key } })
      expect(response.statusCode).toBe(200)
      largest = Math.max(largest, response.rawPayload.length)
      expect(exporter.cachedBytes()).toBeLessThanOrEqual(LIMIT)
    }
    expect(largest * DAYS.length).toBeGreaterThan(LIMIT)
    // ...and several fit
    expect(largest * 3).toBeLessThan(LIMIT)
    expect(exporter.cachedBytes()).toBeGreaterThan(LIMIT - largest)

    // written without an import: the oldest day was dropped (read again), the newest is still cached
    await h.database.pool.query('update pv_15m set tot_pv = -1')
    const first = await h.app.inject({ url: dayPath(DAYS[0] as string), headers: { 'x-api-key': key } })
    const last = await h.app.inject({ url: dayPath(DAYS.at(-1) as string), headers: { 'x-api-key': key } })
    expect((first.json() as Array<{ tot_pv: number }>).every((r) => r.tot_pv === -1)).toBe(true)
    expect((last.json() as Array<{ tot_pv: number }>).some((r) => r.tot_pv === -1)).toBe(false)
  })
})
