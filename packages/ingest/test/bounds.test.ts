import http from 'node:http'
import { setTimeout as delay } from 'node:timers/promises'
import { gzipSync } from 'node:zlib'
import { createApiKey } from '@campus/energy-data/live'
import { launchService, type RunningService } from '@campus/shared'
import { needsService, scrapeMetric } from '@campus/shared/testing'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ingestService, senmlTopic } from '../src/service.ts'
import { BASE, eventually, ingestDatabase, QUARTER, testTopicRoot } from './support.ts'

/**
 * The worst a sender can send, to a real ingest process (its own heap limit, 192 MB, as deployed)
 * on the machine's Mosquitto: each is refused or quarantined by what it is, the process's memory
 * stays bounded, and the next good message is written at once (nothing holds the stream).
 */
const mosquittoUrl = process.env.TEST_MQTT_URL || 'mqtt://127.0.0.1:1883'
const onBroker = await needsService('ingest bounds tests (Mosquitto)', 'TEST_MQTT_URL')

const { database, writeKey } = await ingestDatabase()
afterAll(() => database.close())

const run = `${process.pid % 100_000}`
const IN_FLIGHT_MB = 2
const root = testTopicRoot('bounds')
const topic = senmlTopic('DL-CF-01', root)

/** The process's resident memory, as its /metrics tells it. */
const residentBytes = (url: string) => scrapeMetric(url, 'process_resident_memory_bytes')

const count = async (sql: string, params: unknown[] = []) =>
  Number((await database.pool.query(`select count(*) as n from ${sql}`, params)).rows[0].n)

/** Messages received and not yet committed, as its /metrics tells it. */
const heldMessages = (url: string) => scrapeMetric(url, 'ingest_held_messages')

/** About 720 kB of samples of one meter, `records` seconds from `fromMs` (a label without a trailing _ is ignored, RFC 8428 4.4). */
const paddedPack = (meter: number, fromMs: number, records = 700) =>
  JSON.stringify(
    Array.from({ length: records }, (_, i) => ({
      n: `urn:campus:meter:${meter}`,
      t: fromMs / 1000 + i,
      v: 3.5,
      pad: 'x'.repeat(1030),
    })),
  )

/** Meter 911's latest row (written before) locked by another session while `work` runs: no write of meter 911 can commit. */
async function whileLocked<T>(work: () => Promise<T>): Promise<T> {
  const blocker = await database.pool.connect()
  try {
    await blocker.query('begin')
    await blocker.query('select 1 from meter_latest where meter_id = 911 for update')
    return await work()
  } finally {
    await blocker.query('rollback')
    blocker.release()
  }
}

/** A pack of `records` records, each refused (an unknown meter with a long name), about `records` x 120 bytes. */
const refusedPack = (records: number, salt: string) =>
  JSON.stringify(
    Array.from({ length: records }, (_, i) => ({
      n: `urn:campus:meter:9${String(i).padStart(6, '0')}`,
      t: BASE / 1000 + i,
      v: 1,
      u: `kW${salt}${'x'.repeat(60)}`,
    })),
  )

/** A real ingest process on the machine's Mosquitto, taking `topicRoot`'s packs, its bytes in flight bounded at `inFlightMb`. */
const launchIngest = (topicRoot: string, inFlightMb: number) =>
  launchService(ingestService, {
    env: {
      ENERGY_DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      MIGRATE_ON_START: 'false',
      MQTT_URL: mosquittoUrl,
      MQTT_TOPIC_ROOT: topicRoot,
      MQTT_CLIENT_ID: `${topicRoot}-${run}`.slice(-23),
      MQTT_SHARE_GROUP: `g${run}${inFlightMb}`,
      MQTT_SESSION_SECONDS: '60',
      INGEST_IN_FLIGHT_MB: String(inFlightMb),
    },
    maxOutput: 100_000,
  })

/** An ingest process (launchIngest) and a publisher, started before a block's tests and stopped after them. */
function ingestForBlock(topicRoot: string, inFlightMb: number) {
  const block = {} as { ingest: RunningService; publisher: mqtt.MqttClient }
  beforeAll(async () => {
    block.ingest = await launchIngest(topicRoot, inFlightMb)
    block.publisher = await mqtt.connectAsync(mosquittoUrl, { clientId: `${topicRoot}-pub`.slice(-23) })
  })
  afterAll(async () => {
    process.stdout.write(block.ingest?.output() ?? '')
    await block.publisher?.endAsync()
    if (block.ingest) expect(await block.ingest.stop('SIGTERM')).toBe(0)
  })
  return block
}

describe.runIf(onBroker)('bounded memory for every message and request', () => {
  // small, so that a burst of a few packs of 700 kB crosses it
  const block = ingestForBlock(root, IN_FLIGHT_MB)
  const good = async (meter: number, t: number) => {
    const pack = JSON.stringify([{ n: `urn:campus:meter:${meter}`, t: t / 1000, v: 42.5 }])
    await block.publisher.publishAsync(topic, pack, { qos: 1 })
    await eventually(
      async () => (await count('meter_samples where meter_id = $1 and at = $2', [meter, new Date(t)])) === 1,
      `the good sample after the bad (${new Date(t).toISOString()})`,
    )
  }

  const post = (body: string | Buffer, headers: Record<string, string> = { 'x-api-key': writeKey }) =>
    fetch(`${block.ingest.url}/ingest/senml`, {
      method: 'POST',
      headers: { 'content-type': 'application/senml+json', ...headers },
      body,
    })

  it('a 1 MB pack of refused records, over MQTT and HTTP: kept once each, memory bounded, the stream goes on', async () => {
    const before = await residentBytes(block.ingest.url)
    const mqttPack = refusedPack(8000, 'm')
    expect(mqttPack.length).toBeGreaterThan(900_000)
    await block.publisher.publishAsync(topic, mqttPack, { qos: 1 })
    await good(910, BASE)
    const httpPack = refusedPack(8000, 'h')
    const res = await post(httpPack)
    expect(res.status).toBe(422)
    expect(((await res.json()) as { refused: unknown[] }).refused).toHaveLength(8000)
    // each message once, its size as sent; each refusal a row referring to it
    for (const pack of [mqttPack, httpPack]) {
      const kept = await database.pool.query<{ id: string; size: number }>(
        'select id, size from quarantine_payloads where payload = $1',
        [Buffer.from(pack)],
      )
      expect(kept.rows.map((r) => r.size)).toEqual([pack.length])
      expect(await count('quarantine where payload_id = $1', [kept.rows[0]!.id])).toBe(8000)
    }
    const after = await residentBytes(block.ingest.url)
    process.stdout.write(
      `ingest bounds: resident ${Math.round(before / 2 ** 20)} MB -> ${Math.round(after / 2 ** 20)} MB\n`,
    )
    expect(after).toBeLessThan(400 * 2 ** 20)
  })

  it('an 8 MB MQTT message is never held: quarantined as too_large by its first bytes, the process unmoved', async () => {
    const before = await residentBytes(block.ingest.url)
    const huge = `[${'{"n":"urn:campus:meter:900","v":1},'.repeat(230_000)}{"n":"urn:campus:meter:900","v":1}]`
    expect(huge.length).toBeGreaterThan(8_000_000)
    await block.publisher.publishAsync(topic, huge, { qos: 1 })
    await good(910, BASE + QUARTER)
    const kept = await database.pool.query<{ code: string; size: number; bytes: number }>(
      `select q.code, p.size, octet_length(p.payload) as bytes from quarantine q join quarantine_payloads p on p.id = q.payload_id
       where q.code = 'too_large' and p.source = $1`,
      [`mqtt:${topic}`],
    )
    expect(kept.rows).toHaveLength(1)
    expect(kept.rows[0]!.bytes).toBe(4096)
    expect(kept.rows[0]!.size).toBeGreaterThan(8_000_000)
    const after = await residentBytes(block.ingest.url)
    process.stdout.write(
      `ingest bounds: 8 MB message, resident ${Math.round(before / 2 ** 20)} MB -> ${Math.round(after / 2 ** 20)} MB\n`,
    )
    expect(after - before).toBeLessThan(32 * 2 ** 20)
  })

  it('a NUL byte, raw or escaped: quarantined as bytes, never retried, the stream goes on', async () => {
    const raw = Buffer.concat([
      Buffer.from('[{"n":"urn:campus:meter:900\u0000","v":1}'),
      Buffer.from([0]),
      Buffer.from(']'),
    ])
    const escaped = JSON.stringify([{ n: 'urn:campus:meter:900\u0000', t: BASE / 1000, v: 1 }])
    await block.publisher.publishAsync(topic, raw, { qos: 1 })
    await block.publisher.publishAsync(topic, escaped, { qos: 1 })
    await good(910, BASE + 2 * QUARTER)
    const codes = await database.pool.query<{ code: string; payload: Buffer }>(
      `select q.code, p.payload from quarantine q join quarantine_payloads p on p.id = q.payload_id
       where p.payload = any($1::bytea[]) order by q.id`,
      [[raw, Buffer.from(escaped)]],
    )
    expect(codes.rows.map((r) => r.code)).toEqual(['malformed_json', 'bad_record'])
    expect(codes.rows[0]!.payload.equals(raw)).toBe(true)
  })

  it('HTTP: a gzip body is taken; a gzip bomb is 413 before it is inflated; another encoding is 415', async () => {
    const postEncoded = (body: Buffer, encoding: string) =>
      post(body, { 'content-encoding': encoding, 'x-api-key': writeKey })
    const pack = JSON.stringify([{ n: 'urn:campus:meter:900', t: (BASE + 3 * QUARTER) / 1000, v: 7.25 }])
    const taken = await postEncoded(gzipSync(pack), 'gzip')
    expect(taken.status).toBe(200)
    expect(await taken.json()).toMatchObject({ samples: 1 })
    const before = await residentBytes(block.ingest.url)
    // 256 MB of zeros in a quarter of a megabyte
    const bomb = gzipSync(Buffer.alloc(1 << 28))
    expect(bomb.length).toBeLessThan(300_000)
    const refused = await postEncoded(bomb, 'gzip')
    expect(refused.status).toBe(413)
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/more than 1048576 bytes once decompressed/)
    expect((await postEncoded(Buffer.from(pack), 'compress')).status).toBe(415)
    expect((await residentBytes(block.ingest.url)) - before).toBeLessThan(64 * 2 ** 20)
  })

  it('a burst of large packs while nothing commits: the bytes held stay within INGEST_IN_FLIGHT_MB, then all are written', async () => {
    // meter 911's latest row, locked by another session: the writer's transaction waits on it
    await good(911, BASE + 9 * QUARTER)
    const packs = 10
    const records = 700
    await whileLocked(async () => {
      for (let k = 0; k < packs; k++) {
        const pack = paddedPack(911, BASE + (10 + k) * QUARTER, records)
        expect(pack.length).toBeGreaterThan(700_000)
        await block.publisher.publishAsync(topic, pack, { qos: 1 })
      }
      await eventually(async () => (await heldMessages(block.ingest.url)) >= 2, 'the first packs held')
      // Mosquitto sends 20 messages ahead of their acknowledgement: without the bound all ten arrive
      // in well under a second; with it, the service stops reading past 2 MB (a chunk read may hold one more)
      const seen: number[] = []
      for (let i = 0; i < 10; i++) {
        seen.push(await heldMessages(block.ingest.url))
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(Math.max(...seen)).toBeLessThanOrEqual(Math.ceil(IN_FLIGHT_MB / 0.7) + 1)
      // one bound for both transports: a pack sent over HTTP meanwhile is answered 503 at once
      const refused = await post(JSON.stringify([{ n: 'urn:campus:meter:910', t: BASE / 1000 + 5, v: 1 }]))
      expect(refused.status).toBe(503)
      expect(refused.headers.get('retry-after')).toBe('5')
    })
    await eventually(
      async () =>
        (await count('meter_samples where meter_id = 911 and at >= $1', [new Date(BASE + 10 * QUARTER)])) ===
        packs * records,
      'every pack written once the lock is gone',
      60_000,
    )
    expect(await heldMessages(block.ingest.url)).toBe(0)
  })

  it('HTTP packs hold a quarter of INGEST_IN_FLIGHT_MB for one credential, half for all: past it 503 before the body is read, and MQTT goes on', async () => {
    await good(911, BASE + 29 * QUARTER)
    const keys = [writeKey]
    for (const name of ['gateway-b', 'gateway-c']) {
      keys.push((await createApiKey(database.db, { name, endpoints: ['/ingest/*'] })).key)
    }
    // five packs of the first gateway, one of each other (720 kB each, 2 MB in all: HTTP's 1 MB, 512 kB a gateway)
    const sends = [0, 0, 0, 0, 0, 1, 2].map((gateway, k) => ({
      gateway,
      pack: paddedPack(911, BASE + (30 + k) * QUARTER),
    }))
    const answered = new Map<number, number>()
    const send = (k: number) =>
      post(sends[k]!.pack, { 'x-api-key': keys[sends[k]!.gateway]! }).then((r) => {
        answered.set(k, r.status)
        return r
      })
    const answers = await whileLocked(async () => {
      // the first gateway's first pack is taken and waits for the lock, its four others are refused
      const first = [0, 1, 2, 3, 4].map(send)
      await eventually(async () => answered.size >= 4, "four of the first gateway's packs answered")
      // another gateway still has its share; a third finds HTTP's half full
      const others = [send(5)]
      await delay(500)
      others.push(send(6))
      await eventually(async () => answered.size >= 5, "the third gateway's pack answered")
      await delay(1000)
      expect([...answered.values()]).toEqual([503, 503, 503, 503, 503])
      expect(answered.has(0) || answered.has(5)).toBe(false)
      expect(await scrapeMetric(block.ingest.url, 'ingest_held_bytes')).toBeGreaterThanOrEqual(2 ** 20)
      // the broker's stream still has room: a pack published now is read and held too
      await block.publisher.publishAsync(topic, paddedPack(911, BASE + 37 * QUARTER), { qos: 1 })
      await eventually(async () => (await heldMessages(block.ingest.url)) === 3, 'the MQTT pack held beside them')
      return [...first, ...others]
    })
    await Promise.all(answers)
    expect(answered.get(0)).toBe(200)
    expect(answered.get(5)).toBe(200)
    // the refused ones, sent again once there is room, are taken
    await eventually(
      async () => (await scrapeMetric(block.ingest.url, 'ingest_held_bytes')) === 0,
      'the bytes released',
    )
    let taken = 0
    for (const k of [1, 2, 3, 4, 6]) {
      const again = await send(k)
      expect(again.status).toBe(200)
      taken += ((await again.json()) as { samples: number }).samples
    }
    expect(taken).toBe(5 * 700)
    await eventually(
      async () =>
        (await count('meter_samples where meter_id = 911 and at >= $1', [new Date(BASE + 30 * QUARTER)])) === 8 * 700,
      'the seven HTTP packs and the MQTT pack stored',
    )
  })

  it('a sender without a credential is answered 401 from its headers: its declared megabyte is never read', async () => {
    const answer = await new Promise<number>((resolve, reject) => {
      const request = http.request(`${block.ingest.url}/ingest/senml`, {
        method: 'POST',
        headers: { 'content-type': 'application/senml+json', 'content-length': String(1_000_000) },
      })
      const timer = setTimeout(() => reject(new Error('no answer before the body')), 5000)
      request.on('response', (response) => {
        clearTimeout(timer)
        response.resume()
        resolve(response.statusCode ?? 0)
        request.destroy()
      })
      request.on('error', () => undefined)
      request.flushHeaders()
    })
    expect(answer).toBe(401)
    expect(await scrapeMetric(block.ingest.url, 'ingest_held_bytes')).toBe(0)
  })
})

describe.runIf(onBroker)('packs held as they came: parsed only ahead of their batch', () => {
  const aheadRoot = testTopicRoot('ahead')
  const block = ingestForBlock(aheadRoot, 64)

  it('twenty packs of 1 MB held while nothing commits: the heap holds two batches of parsed samples, not twenty packs', async () => {
    const meterTopic = senmlTopic('DL-CF-01', aheadRoot)
    // ten days back: the packs' eight days of seconds end before the other tests' samples
    const from = BASE - 10 * 96 * QUARTER
    await block.publisher.publishAsync(
      meterTopic,
      JSON.stringify([{ n: 'urn:campus:meter:911', t: from / 1000, v: 1 }]),
      {
        qos: 1,
      },
    )
    await eventually(
      async () => (await count('meter_samples where meter_id = 911 and at = $1', [new Date(from)])) === 1,
      'the first sample',
    )
    const packs = 20
    const records = 35_000
    const heapBefore = await scrapeMetric(block.ingest.url, 'nodejs_heap_size_used_bytes')
    const heapDuring = await whileLocked(async () => {
      for (let k = 0; k < packs; k++) {
        // a base name and base time: about 1 MB for 35,000 records
        const pack = JSON.stringify(
          Array.from({ length: records }, (_, i) => ({
            ...(i === 0 ? { bn: 'urn:campus:meter:', bt: from / 1000 + 1 + k * records } : {}),
            n: '911',
            t: i,
            v: 2 + (i % 7),
          })),
        )
        expect(pack.length).toBeGreaterThan(900_000)
        await block.publisher.publishAsync(meterTopic, pack, { qos: 1 })
      }
      await eventually(async () => (await heldMessages(block.ingest.url)) === packs, 'every pack held')
      return scrapeMetric(block.ingest.url, 'nodejs_heap_size_used_bytes')
    })
    process.stdout.write(
      `ingest read-ahead: ${packs} packs of 1 MB held, heap used ${Math.round(heapBefore / 2 ** 20)} MB -> ${Math.round(heapDuring / 2 ** 20)} MB\n`,
    )
    // parsed as they came, twenty packs of 35,000 samples take over 100 MB of the 192 MB heap
    expect(heapDuring - heapBefore).toBeLessThan(48 * 2 ** 20)
    await eventually(
      async () =>
        (await count('meter_samples where meter_id = 911 and at > $1 and at <= $2', [
          new Date(from),
          new Date(from + packs * records * 1000),
        ])) ===
        packs * records,
      'every pack written once the lock is gone',
      120_000,
    )
  })
})
