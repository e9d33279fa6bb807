import { dropSamplePartitionsBefore, seedEstate } from '@campus/energy-data/live'
import { needsService } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setLiveFrom } from '../../energy-data/src/commands/live-from.ts'
import { BASE, eventually, type Ingest, ingestDatabase, MINUTE, QUARTER, startIngest } from './support.ts'

/** The rules of what a live sample may change, each by its name in docs/LIVE.md. */
const { database, writeKey } = await ingestDatabase()
afterAll(() => database.close())

const post = (ingest: Ingest, records: object[]) =>
  ingest.app.inject({
    method: 'POST',
    url: '/ingest/senml',
    headers: { 'content-type': 'application/senml+json', 'x-api-key': writeKey },
    payload: JSON.stringify(records),
  })

const quarter = async (meter: number, t: number) =>
  (
    await database.pool.query<{ sum_value: number; avg_value: number; count_value: number }>(
      'select sum_value, avg_value, count_value from data_15m where meter_id = $1 and time_15m = $2',
      [meter, new Date(t)],
    )
  ).rows[0]

describe('what a live sample may change', () => {
  let ingest: Ingest
  beforeAll(async () => {
    ingest = await startIngest(database)
  })
  afterAll(() => ingest.stop())

  it('before_live: a late sample never rewrites a quarter hour a seed wrote, until the meter is opened to it', async () => {
    // three days seeded up to BASE: the meters' live samples start there
    await seedEstate(database.pool, { fromMs: BASE - 3 * 96 * QUARTER, toMs: BASE, seed: 3 })
    const seeded = BASE - 8 * QUARTER
    const before = await quarter(860, seeded)
    expect(before?.sum_value).toBeGreaterThan(0)
    const late = await post(ingest, [{ n: 'urn:campus:meter:860', t: (seeded + MINUTE) / 1000, v: 1, u: 'Wh' }])
    expect(late.statusCode).toBe(422)
    expect(late.json().refused).toMatchObject([{ index: 0, code: 'before_live' }])
    expect(await quarter(860, seeded)).toEqual(before)
    // the quarter hour under way when the seed ended is the live samples' own
    const now = await post(ingest, [{ n: 'urn:campus:meter:860', t: (BASE + MINUTE) / 1000, v: 500, u: 'Wh' }])
    expect(now.json()).toMatchObject({ samples: 1 })
    expect(await quarter(860, BASE)).toMatchObject({ sum_value: 0.5, count_value: 1 })
    // opened on purpose: the late sample replaces the seeded statistics with its own
    expect(await setLiveFrom(database.pool, { meter: '860', clear: true })).toEqual({ meter: 860, live_from: null })
    const opened = await post(ingest, [{ n: 'urn:campus:meter:860', t: (seeded + MINUTE) / 1000, v: 1, u: 'Wh' }])
    expect(opened.json()).toMatchObject({ samples: 1 })
    expect(await quarter(860, seeded)).toMatchObject({ sum_value: 0.001, count_value: 1 })
  })

  it('too_old and future: a sample more than INGEST_MAX_AGE_DAYS behind, or 300 s ahead, of its arrival', async () => {
    const res = await post(ingest, [
      { n: 'urn:campus:meter:901', t: (Date.now() - 31 * 86_400_000) / 1000, v: 3 },
      { n: 'urn:campus:meter:901', t: (Date.now() + 10 * MINUTE) / 1000, v: 3 },
    ])
    expect(res.json().refused.map((r: { code: string }) => r.code)).toEqual(['too_old', 'future'])
  })

  it('keeps a sample to the microsecond, and never moves one across a quarter-hour edge', async () => {
    const edge = BASE + 20 * QUARTER
    const res = await post(ingest, [
      { n: 'urn:campus:meter:901', t: edge / 1000 - 0.0004, v: 10 },
      { n: 'urn:campus:meter:901', t: edge / 1000 - 0.0000004, v: 20 },
      { n: 'urn:campus:meter:901', t: edge / 1000, v: 30 },
    ])
    expect(res.json()).toMatchObject({ samples: 3, duplicates: 0 })
    const stored = await database.pool.query<{ at: string }>(
      `select to_char(at at time zone 'UTC', 'HH24:MI:SS.US') as at from meter_samples
       where meter_id = 901 and at between $1 and $2 order by at`,
      [new Date(edge - 1000), new Date(edge)],
    )
    const hhmm = new Date(edge - 1000).toISOString().slice(11, 16)
    expect(stored.rows.map((r) => r.at)).toEqual([
      `${hhmm}:59.999600`,
      `${hhmm}:59.999999`,
      expect.stringMatching(/:00\.000000$/),
    ])
    expect(await quarter(901, edge - QUARTER)).toMatchObject({ count_value: 2, avg_value: 15 })
    expect(await quarter(901, edge)).toMatchObject({ count_value: 1, avg_value: 30 })
  })

  it('a month without samples gets its partition with its first sample; the retention drops whole months only', async () => {
    const partitions = async () =>
      (
        await database.pool.query<{ name: string }>(
          `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
           where i.inhparent = 'meter_samples'::regclass order by 1`,
        )
      ).rows.map((r) => r.name)
    const monthName = (t: number) => `meter_samples_p${new Date(t).toISOString().slice(0, 7).replace('-', '')}`
    // a buffer of eleven months, taken by an instance that allows a year
    const t = BASE - 330 * 86_400_000
    expect(await partitions()).not.toContain(monthName(t))
    await setLiveFrom(database.pool, { meter: '901', clear: true })
    const patient = await startIngest(database, undefined, { limits: { maxAgeMs: 400 * 86_400_000 } })
    try {
      expect((await post(patient, [{ n: 'urn:campus:meter:901', t: t / 1000, v: 4 }])).json()).toMatchObject({
        samples: 1,
      })
    } finally {
      await patient.stop()
    }
    expect(await partitions()).toContain(monthName(t))
    const quartersBefore = await database.pool.query('select count(*)::int as n from data_15m')
    const dropped = await dropSamplePartitionsBefore(database.pool, t + 40 * 86_400_000)
    expect(dropped).toContain(monthName(t))
    expect(await partitions()).not.toContain(monthName(t))
    expect(await partitions()).toContain(monthName(BASE))
    // the samples are gone with their month; every quarter hour stays
    expect(
      (
        await database.pool.query('select count(*)::int as n from meter_samples where at < $1', [
          new Date(t + 40 * 86_400_000),
        ])
      ).rows[0].n,
    ).toBe(0)
    expect((await database.pool.query('select count(*)::int as n from data_15m')).rows[0].n).toBe(
      quartersBefore.rows[0].n,
    )
  })
})

// a lock held by another connection: the embedded database has one connection for all
const onServer = await needsService('a writer stalled by a lock (a PostgreSQL server)', 'TEST_DATABASE_URL')

describe.runIf(onServer)('a stalled writer', () => {
  it('is not ready while messages wait longer than the stall bound, and ready again once they are written', async () => {
    const ingest = await startIngest(database, undefined, { stallMs: 300 })
    const holder = await database.pool.connect()
    try {
      await holder.query('begin')
      await holder.query('lock table meter_samples in access exclusive mode')
      const pending = post(ingest, [{ n: 'urn:campus:meter:901', t: (BASE + 30 * QUARTER) / 1000, v: 5 }])
      await eventually(async () => {
        const ready = await ingest.app.inject({ method: 'GET', url: '/health/ready' })
        return ready.statusCode === 503 && /^stalled: 1 message/.test(ready.json().checks.writer)
      }, 'readiness to say the writer is stalled')
      await holder.query('rollback')
      expect((await pending).json()).toMatchObject({ samples: 1 })
      expect((await ingest.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200)
    } finally {
      await holder.query('rollback').catch(() => undefined)
      holder.release()
      await ingest.stop()
    }
  })
})
