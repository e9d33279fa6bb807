import { energyService, findBrokerCredential, issueBrokerCredential } from '@campus/energy-data/live'
import { runServiceCommand } from '@campus/shared'
import { needsService } from '@campus/shared/testing'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmbeddedBroker } from '../src/broker.ts'
import { senmlTopic } from '../src/service.ts'
import {
  BASE,
  eventually,
  type Ingest,
  ingestDatabase,
  MINUTE,
  QUARTER,
  quarterStats,
  startIngest,
  storedQuarters,
  testTopicRoot,
} from './support.ts'

const { database, writeKey, readKey } = await ingestDatabase()
afterAll(() => database.close())

const post = (ingest: Ingest, payload: string, key = writeKey, type = 'application/senml+json') =>
  ingest.app.inject({
    method: 'POST',
    url: '/ingest/senml',
    headers: { 'content-type': type, ...(key ? { 'x-api-key': key } : {}) },
    payload,
  })

/** Deterministic noise: the same samples every run. */
const rand = (i: number) => {
  const x = Math.sin(i * 12.9898) * 43758.5453
  return x - Math.floor(x)
}
const shuffle = <T>(items: T[]): T[] =>
  items
    .map((item, i) => [rand(i + 7), item] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, item]) => item)

const count = async (table: string, where = 'true') =>
  Number((await database.pool.query(`select count(*) as n from ${table} where ${where}`)).rows[0].n)

/** The quarantine's rows with their message (payload as text, source), oldest first. */
const quarantineRows = async (where = 'true', params: unknown[] = []) =>
  (
    await database.pool.query<{
      id: string
      code: string
      reason: string
      record_index: number | null
      payload: string
      source: string
    }>(
      `select q.id, q.code, q.reason, q.record_index, convert_from(p.payload, 'UTF8') as payload, p.source
       from quarantine q join quarantine_payloads p on p.id = q.payload_id where ${where} order by q.id`,
      params,
    )
  ).rows

describe('POST /ingest/senml', () => {
  let ingest: Ingest
  beforeAll(async () => {
    ingest = await startIngest(database)
  })
  afterAll(() => ingest.stop())

  it('writes only with a key whose pattern names /ingest/: a key that reads everything may not write', async () => {
    const pack = JSON.stringify([{ n: 'urn:campus:meter:900', t: BASE / 1000, v: 40 }])
    expect((await post(ingest, pack, '')).statusCode).toBe(401)
    expect((await post(ingest, pack, 'edk_nope')).statusCode).toBe(401)
    const readOnly = await post(ingest, pack, readKey)
    expect(readOnly.statusCode).toBe(403)
    expect(readOnly.json().detail).toMatch(/\/ingest\//)
    expect(await count('meter_samples')).toBe(0)
    expect((await post(ingest, pack, writeKey, 'text/plain')).statusCode).toBe(415)
  })

  it('refuses an address with 429 once it has failed to authenticate 30 times in a minute, before any check', async () => {
    const own = await startIngest(database)
    try {
      const pack = JSON.stringify([{ n: 'urn:campus:meter:900', t: BASE / 1000, v: 40 }])
      const statuses: number[] = []
      for (let i = 0; i < 32; i++) statuses.push((await post(own, pack, `edk_${'x'.repeat(43)}`)).statusCode)
      expect(statuses.slice(0, 30)).toEqual(Array(30).fill(401))
      const blocked = await post(own, pack, writeKey)
      expect(blocked.statusCode).toBe(429)
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0)
    } finally {
      await own.stop()
    }
  })

  it('folds shuffled, duplicated samples in W and kW into exact quarter statistics, and the mirrored column', async () => {
    // meter 900 (power, kW, mirrored by datacenter_1.tot_dc): a sample a minute for two hours
    const sent: Array<{ meter: number; t: number; value: number }> = []
    for (let i = 0; i < 120; i++) sent.push({ meter: 900, t: BASE + i * MINUTE, value: 30 + 10 * rand(i) })
    const records = sent.map((s, i) =>
      i % 2 === 0
        ? { n: `urn:campus:meter:${s.meter}`, t: s.t / 1000, v: s.value, u: 'kW' }
        : { n: `urn:campus:meter:${s.meter}`, t: s.t / 1000, v: s.value * 1000, u: 'W' },
    )
    // shuffled across packs, a third of them sent twice
    const order = shuffle([...records, ...records.filter((_, i) => i % 3 === 0)])
    for (let k = 0; k < order.length; k += 25) {
      const res = await post(ingest, JSON.stringify(order.slice(k, k + 25)))
      expect(res.statusCode).toBe(200)
    }
    const expected = quarterStats(sent)
    const stored = await storedQuarters(database, [900])
    expect(stored.size).toBe(8)
    for (const [key, want] of expected) {
      const row = stored.get(key)!
      expect(row, key).toBeDefined()
      expect(row.count_value).toBe(want.count)
      expect(row.sum_value).toBeCloseTo(want.sum, 9)
      expect(row.avg_value).toBeCloseTo(want.avg, 9)
      expect(row.min_value).toBeCloseTo(want.min, 12)
      expect(row.max_value).toBeCloseTo(want.max, 12)
      expect(row.tag).toBe('ok')
    }
    const mirror = await database.pool.query<{ time_15m: Date; tot_dc: number }>(
      'select time_15m, tot_dc from datacenter_1_15m where time_15m >= $1',
      [new Date(BASE)],
    )
    expect(mirror.rows).toHaveLength(8)
    for (const r of mirror.rows) expect(r.tot_dc).toBeCloseTo(expected.get(`900@${r.time_15m.getTime()}`)!.avg, 9)
    expect(await count('meter_samples', 'meter_id = 900')).toBe(120)
  })

  it('takes an energy meter’s increments and a water meter’s register, a late reading and a reset included', async () => {
    // meter 860 (kWh): increments in Wh; meter 920 (m³): its register in litres
    const t0 = BASE + 8 * QUARTER
    const increments = Array.from({ length: 30 }, (_, i) => ({ t: t0 + i * MINUTE, wh: 500 + i }))
    const res = await post(
      ingest,
      JSON.stringify(shuffle(increments).map((s) => ({ n: 'urn:campus:meter:860', t: s.t / 1000, v: s.wh, u: 'Wh' }))),
    )
    expect(res.json()).toMatchObject({ samples: 30, quarantined: 0 })
    const energy = await storedQuarters(database, [860])
    const first = energy.get(`860@${t0}`)!
    expect(first.sum_value).toBeCloseTo(
      increments.slice(0, 15).reduce((a, s) => a + s.wh / 1000, 0),
      9,
    )
    expect(first.count_value).toBe(15)

    // the register: 1000 L, 1100 L, then (late) 1050 L between them, then a reset to 20 L
    const reg = (t: number, litres: number) => ({ n: 'urn:campus:meter:920', t: t / 1000, s: litres, u: 'l' })
    await post(ingest, JSON.stringify([reg(t0, 1000), reg(t0 + 20 * MINUTE, 1100)]))
    let water = await storedQuarters(database, [920])
    expect(water.get(`920@${t0 + QUARTER}`)!.sum_value).toBeCloseTo(0.1, 12)
    await post(ingest, JSON.stringify([reg(t0 + 10 * MINUTE, 1050)]))
    water = await storedQuarters(database, [920])
    // 1000 -> 1050 in the first quarter hour, 1050 -> 1100 in the second: the late reading moved half of it
    expect(water.get(`920@${t0}`)!.sum_value).toBeCloseTo(0.05, 12)
    expect(water.get(`920@${t0 + QUARTER}`)!.sum_value).toBeCloseTo(0.05, 12)
    await post(ingest, JSON.stringify([reg(t0 + 25 * MINUTE, 20)]))
    water = await storedQuarters(database, [920])
    const reset = water.get(`920@${t0 + QUARTER}`)!
    // a register that went back restarted: its reading is the increment, never a negative volume
    expect(reset.sum_value).toBeCloseTo(0.05 + 0.02, 12)
    expect(reset.min_value).toBeGreaterThanOrEqual(0)
    expect(reset.tag).toBe('estimated')
  })

  it('a pack holding a sample of four weeks ago and one of today: both quarter hours and their rollups, exact', async () => {
    const HOUR = 4 * QUARTER
    const old = BASE - 26 * 24 * 60 * MINUTE + 7 * MINUTE
    const recent = BASE + 7 * MINUTE
    const pack = [
      { n: 'urn:campus:meter:912', t: old / 1000, v: 5 },
      { n: 'urn:campus:meter:912', t: recent / 1000, v: 7 },
    ]
    expect((await post(ingest, JSON.stringify(pack))).statusCode).toBe(200)
    const hourOf = (t: number) => Math.floor(t / HOUR) * HOUR
    const hours = await database.pool.query<{ start: Date; values_n: number; avg_sum: number }>(
      `select start, values_n, avg_sum from data_rollup
       where level = 'hour' and meter_id = 912 and start = any($1::timestamptz[]) order by start`,
      [[new Date(hourOf(old)), new Date(hourOf(recent))]],
    )
    expect(hours.rows.map((r) => [r.start.getTime(), r.values_n, r.avg_sum])).toEqual([
      [hourOf(old), 1, 5],
      [hourOf(recent), 1, 7],
    ])
  })

  it('quarantines each bad record with its reason, writing the good ones of the same pack', async () => {
    const before = await count('meter_samples')
    const t = (BASE + 12 * QUARTER) / 1000
    const pack = [
      { bn: 'urn:campus:meter:', bt: t, n: '901', v: 12.5, u: 'kW' },
      { n: '999', v: 1 },
      { n: '901', t: 60, v: 3, u: 'Cel' },
      { n: '901', t: 120, v: '7' },
      { n: '901', t: 86_400 * 30, v: 7 },
      { n: '901', t: -86_400 * 365 * 10, v: 7 },
      { n: '930', t: 180, s: 5 },
      { n: '901', t: 240, v: 13.5 },
    ]
    const res = await post(ingest, JSON.stringify(pack))
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.samples).toBe(2)
    expect(body.refused.map((r: { index: number; code: string }) => [r.index, r.code])).toEqual([
      [3, 'bad_record'],
      [1, 'unknown_meter'],
      [2, 'unit'],
      [4, 'future'],
      [5, 'before_install'],
      [6, 'register_of_mean'],
    ])
    expect(await count('meter_samples')).toBe(before + 2)
    const rows = await quarantineRows()
    expect(rows.slice(-6).map((r) => r.code)).toEqual(body.refused.map((r: { code: string }) => r.code))
    for (const r of rows.slice(-6)) expect(r.payload).toBe(JSON.stringify(pack))
    // the message is kept once, its six refusals refer to it
    expect(await count('quarantine_payloads', `payload = convert_to('${JSON.stringify(pack)}', 'UTF8')`)).toBe(1)
    // a payload that is no SenML pack at all: 422, kept whole
    for (const bad of ['{"n":', '{"n":"urn:campus:meter:901"}', '[]']) {
      const whole = await post(ingest, bad)
      expect(whole.statusCode, bad).toBe(422)
    }
    const whole = (await quarantineRows()).slice(-3).reverse()
    expect(whole.map((r) => [r.code, r.record_index])).toEqual([
      ['not_senml', null],
      ['not_senml', null],
      ['malformed_json', null],
    ])
  })
})

describe('the quarantine', () => {
  let ingest: Ingest
  beforeAll(async () => {
    ingest = await startIngest(database)
  })
  afterAll(() => ingest.stop())

  const energy = (args: string[]) =>
    runServiceCommand(energyService, args, { env: { ENERGY_DATABASE_URL: database.url, MIGRATE_ON_START: 'false' } })

  it('refuses a reading after the meter was removed, a time outside the calendar, a value past any reading, and keeps a pack the database refuses', async () => {
    await database.pool.query('update meters set date_to = $1 where id = 863', [new Date(BASE)])
    const late = await post(ingest, JSON.stringify([{ n: 'urn:campus:meter:863', t: BASE / 1000 + 60, v: 3 }]))
    expect(late.statusCode).toBe(422)
    expect(late.json().refused).toMatchObject([{ index: 0, code: 'after_removal' }])
    const absurd = await post(ingest, JSON.stringify([{ n: 'urn:campus:meter:900', t: 1e13, v: 3 }]))
    expect(absurd.json().refused).toMatchObject([{ index: 0, code: 'bad_record' }])
    // two readings whose sum would overflow a double: each is refused for what it is, before any sum
    const t = (BASE - 5 * QUARTER) / 1000
    const overflow = JSON.stringify([
      { n: 'urn:campus:meter:900', t, v: 1.7e308 },
      { n: 'urn:campus:meter:900', t: t + 1, v: 1.7e308 },
      { n: 'urn:campus:meter:900', t: t + 2, v: 31.5 },
    ])
    const refused = await post(ingest, overflow)
    expect(refused.statusCode).toBe(200)
    expect(refused.json()).toMatchObject({
      samples: 1,
      refused: [
        { index: 0, code: 'out_of_range' },
        { index: 1, code: 'out_of_range' },
      ],
    })
    // the database refuses a value (a constraint of its own): the message is kept whole, the stream goes on
    await database.pool.query('alter table data_15m add constraint refuses_4242 check (avg_value <> 4242.5)')
    try {
      const odd = JSON.stringify([{ n: 'urn:campus:meter:900', t: t + 1800, v: 4242.5 }])
      const kept = await post(ingest, odd)
      expect(kept.statusCode).toBe(422)
      expect(kept.json().detail).toMatch(/could not be written \(23514/)
      expect((await quarantineRows('p.payload = $1', [Buffer.from(odd)])).map((r) => [r.code, r.record_index])).toEqual(
        [['not_written', null]],
      )
      expect(await count('meter_samples', `meter_id = 900 and value = 4242.5`)).toBe(0)
    } finally {
      await database.pool.query('alter table data_15m drop constraint refuses_4242')
    }
  })

  it('keeps a refusal once when the same message comes again, lists it, and takes it when replayed once fixed', async () => {
    // meter 931 (irradiance), its installation date mistyped a week ahead: today's reading is refused
    await database.pool.query('update meters set date_from = $1 where id = 931', [new Date(BASE + 7 * 96 * QUARTER)])
    const t = (BASE + 16 * QUARTER) / 1000
    const pack = JSON.stringify([{ n: 'urn:campus:meter:931', t, v: 640, u: 'W/m2' }])
    for (let i = 0; i < 2; i++) {
      const res = await post(ingest, pack)
      expect(res.statusCode).toBe(422)
      expect(res.json().refused).toMatchObject([{ index: 0, code: 'before_install' }])
    }
    const open = await quarantineRows('p.payload = $1 and q.replayed_at is null', [Buffer.from(pack)])
    expect(open).toHaveLength(1)
    const id = String(open[0]!.id)

    const listed = await energy(['quarantine:list'])
    expect(listed.code).toBe(0)
    const rows = JSON.parse(listed.stdout) as Array<{ id: number; code: string; reason: string; payload: string }>
    expect(rows.find((r) => String(r.id) === id)).toMatchObject({ code: 'before_install', payload: pack })

    // still refused: replayed, and kept again with today's reason
    const again = await energy(['quarantine:replay', '--id', id])
    expect(again.code).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ replayed: 1, samples: 0, quarantined: 1 })
    const reopened = await quarantineRows('p.payload = $1 and q.replayed_at is null', [Buffer.from(pack)])
    expect(reopened).toHaveLength(1)

    // the meter's installation date corrected: the replay takes the reading into its quarter hour
    await database.pool.query("update meters set date_from = '2015-04-20' where id = 931")
    const fixed = await energy(['quarantine:replay', '--id', String(reopened[0]!.id)])
    expect(fixed.code).toBe(0)
    expect(JSON.parse(fixed.stdout)).toMatchObject({ replayed: 1, samples: 1, quarantined: 0 })
    const row = await database.pool.query(
      'select avg_value, count_value, tag from data_15m where meter_id = 931 and time_15m = $1',
      [new Date(t * 1000)],
    )
    expect(row.rows[0]).toMatchObject({ avg_value: 640, count_value: 1, tag: 'ok' })
    const left = JSON.parse((await energy(['quarantine:list'])).stdout) as Array<{ payload: string }>
    expect(left.some((r) => r.payload === pack)).toBe(false)
    expect((await energy(['quarantine:replay'])).code).toBe(2)
  })
})

/** A client's login at a test broker: the embedded one takes only credentials of the database. */
interface Login {
  clientId: string
  username?: string
  password?: string
}
interface TestBroker {
  url: string
  close: () => Promise<void>
  /** The login of a user (a datalogger id, or an ingest instance), its client id else. */
  as: (user: string, clientId: string) => Promise<Login>
}

/** The same stream through a broker: the embedded aedes, and the machine's Mosquitto. */
const brokers: Array<[string, (root: string) => Promise<TestBroker>]> = [
  [
    'the embedded broker (aedes)',
    async (root) => {
      const broker = await startEmbeddedBroker('127.0.0.1', 0, {
        find: (username) => findBrokerCredential(database.db, username),
        topicRoot: root,
      })
      return {
        ...broker,
        as: async (user) => ({
          clientId: user,
          ...(await issueBrokerCredential(database.db, {
            username: user,
            role: user.startsWith('DL-') ? 'datalogger' : 'ingest',
          })),
        }),
      }
    },
  ],
]
const mosquittoUrl = process.env.TEST_MQTT_URL || 'mqtt://127.0.0.1:1883'
if (await needsService('Mosquitto tests', 'TEST_MQTT_URL')) {
  brokers.push([
    'Mosquitto',
    async () => ({ url: mosquittoUrl, close: async () => undefined, as: async (_user, clientId) => ({ clientId }) }),
  ])
}

describe.each(brokers)('over MQTT: %s', (name, start) => {
  const run = `${process.pid}-${name.length}`
  it('takes every sample once whatever the order and redeliveries, and quarantines the garbage between', async () => {
    const root = testTopicRoot(`${name.length}`)
    const broker = await start(root)
    const instance = async (user: string) =>
      startIngest(database, { url: broker.url, ...(await broker.as(user, `${user}-${run}`)), group: `g${run}`, root })
    const instances = [await instance('t-a')]
    // two instances split the stream where the broker shares a subscription
    if (instances[0]!.shared) instances.push(await instance('t-b'))
    const publisher = await mqtt.connectAsync(broker.url, await broker.as('DL-CF-01', `t-pub-${run}`))
    try {
      const meter = name.startsWith('Mosquitto') ? 911 : 910
      const t0 = BASE + 20 * QUARTER
      const sent: Array<{ meter: number; t: number; value: number }> = []
      for (let i = 0; i < 600; i++) sent.push({ meter, t: t0 + i * 10_000, value: 100 + 50 * rand(i + 1000) })
      const records = sent.map((s) => ({ n: `urn:campus:meter:${s.meter}`, t: s.t / 1000, v: s.value }))
      const packs: string[] = []
      const order = shuffle([...records, ...records.slice(0, 150)])
      for (let k = 0; k < order.length; k += 30) packs.push(JSON.stringify(order.slice(k, k + 30)))
      // garbage, a meter of another datalogger, and values past any reading (their sum would overflow a double)
      const overflow = JSON.stringify(
        [0, 1].map((i) => ({ n: `urn:campus:meter:${meter}`, t: (t0 - 96 * QUARTER) / 1000 + i, v: 1.7e308 })),
      )
      // each broker's garbage its own (the same payload from the same topic is kept once)
      const garbage = [`garbage { ${name}`, JSON.stringify([{ n: 'urn:campus:meter:860', v: 1, t: meter }]), overflow]
      packs.splice(3, 0, ...garbage)
      for (const p of packs) await publisher.publishAsync(senmlTopic('DL-CF-01', root), p, { qos: 1 })
      // a topic naming no datalogger: its meters cannot be checked, so nothing of it is taken (Mosquitto
      // delivers it on the filter's empty level; aedes does not deliver it at all)
      const empty = name.startsWith('Mosquitto')
      if (empty) await publisher.publishAsync(`${root}//senml`, packs[0] as string, { qos: 1 })
      const samples = () => count('meter_samples', `meter_id = ${meter}`)
      await eventually(async () => (await samples()) === 600, `600 samples of meter ${meter} (${name})`)
      const source = `mqtt:${senmlTopic('DL-CF-01', root)}`
      await eventually(
        async () => (await quarantineRows('p.source = $1', [source])).length === 4,
        'the garbage in the quarantine',
      )
      const codes = (await quarantineRows('p.source = $1', [source])).map((r) => r.code)
      expect(codes.sort()).toEqual(['malformed_json', 'other_datalogger', 'out_of_range', 'out_of_range'])
      if (empty) {
        await eventually(
          async () => (await quarantineRows('p.source = $1', [`mqtt:${root}//senml`])).length === 1,
          'the pack without a datalogger in the quarantine',
        )
        const refused = await quarantineRows('p.source = $1', [`mqtt:${root}//senml`])
        expect(refused.map((r) => [r.code, r.record_index])).toEqual([['bad_topic', null]])
      }
      const expected = quarterStats(sent)
      const stored = await storedQuarters(database, [meter])
      for (const [key, want] of expected) {
        const row = stored.get(key)!
        expect(row.count_value, key).toBe(want.count)
        expect(row.sum_value).toBeCloseTo(want.sum, 8)
        expect(row.min_value).toBe(want.min)
        expect(row.max_value).toBe(want.max)
      }
      // every message taken by exactly one instance
      const taken = await Promise.all(
        instances.map(async (i) => (await i.metrics.messages.get()).values.reduce((a, v) => a + v.value, 0)),
      )
      expect(taken.reduce((a, b) => a + b, 0)).toBe(packs.length + (empty ? 1 : 0))
      if (instances.length === 2) expect(Math.min(...taken)).toBeGreaterThan(0)
    } finally {
      await publisher.endAsync()
      for (const i of instances) await i.stop()
      await broker.close()
    }
  })
})
