/**
 * The data API as `npm start` runs it: on the embedded database served over its socket, with the
 * window cache at its default size. A live sample written into a past window (by another process,
 * as the ingest service does) shows in the next answer for that window: no stale answer.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDatabase, launchService, type RunningService, type ServiceDatabase } from '@campus/shared'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { setLiveFrom } from '../../energy-data/src/commands/live-from.ts'
import type { EnergyDatabase } from '../../energy-data/src/db/schema.ts'
import { createApiKey } from '../../energy-data/src/repositories/api-keys.ts'
import { takeMessages } from '../../energy-data/src/repositories/sample-writes.ts'
import { inTransaction } from '../../energy-data/src/repositories/transaction.ts'
import { seedEstate } from '../../energy-data/src/seed/seed.ts'
import { energyService } from '../../energy-data/src/service.ts'
import { openAndMigrate } from '../src/databases.ts'

const QUARTER = 900_000
const DAY = Math.floor((Date.now() - 2 * 86_400_000) / QUARTER) * QUARTER

let dir: string
let served: ServiceDatabase<unknown>
let energy: RunningService
const logs: string[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'embedded-cache-'))
  served = (await openAndMigrate(energyService, { DATA_DIR: dir })).database
  energy = await launchService(energyService, {
    env: { ENERGY_DATABASE_URL: served.url, MIGRATE_ON_START: 'false', LOG_LEVEL: 'info', DATA_DIR: dir },
    onLine: (line) => logs.push(line),
  })
})

afterAll(async () => {
  await energy?.stop()
  await served?.close()
  rmSync(dir, { recursive: true, force: true })
})

it('answers a past window again with the sample written into it since', async () => {
  // another process's connection to the socket, as the ingest service and the commands have
  const writer = createDatabase<EnergyDatabase>(served.url, { max: 1 })
  try {
    await seedEstate(writer.pool, { fromMs: DAY, toMs: DAY + 4 * QUARTER, seed: 1 })
    const { key } = await createApiKey(writer.db, { name: 'reader', endpoints: ['*'] })
    const url = `${energy.url}/data/meters?ids=900&start_datetime=${new Date(DAY).toISOString()}&end_datetime=${new Date(DAY + QUARTER).toISOString()}`
    const read = async () =>
      ((await (await fetch(url, { headers: { 'x-api-key': key } })).json()) as Array<{ count_value: number }>)[0]!
        .count_value
    const before = await read()
    expect(await read()).toBe(before)
    // live samples may rewrite the seeded quarter hours of this meter (pnpm energy meter:live-from --clear)
    await setLiveFrom(writer.pool, { meter: '900', clear: true })
    const pack = JSON.stringify([{ n: 'urn:campus:meter:900', t: DAY / 1000 + 30, v: 40 }])
    await inTransaction(writer.pool, (c) =>
      takeMessages(c, [{ source: 'test', payload: Buffer.from(pack), receivedMs: Date.now() }]),
    )
    // the quarter hour is folded from its samples alone: one
    expect(await read()).toBe(1)
  } finally {
    await writer.close()
  }
  // and it says why it keeps nothing, once (at info level: nothing is wrong), when its probe has not come back
  const deadline = Date.now() + 10_000
  const said = () =>
    logs.filter(
      (l) =>
        l.includes('"level":30') && l.includes('data cache off: this database does not pass on changes made by other'),
    ).length === 1
  while (!said() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  expect(said()).toBe(true)
})
