import { createDatabase } from '@campus/shared'
import { scrapeMetric, startTcpProxy, type TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EnergyDatabase } from '../../src/db/schema.ts'
import { manySlicesTarget, month } from '../fixtures/month.ts'
import {
  apiKey,
  download,
  type Harness,
  type ServerProcess,
  sleep,
  startEnergyProcess,
  startHarness,
  testDatabase,
} from '../harness.ts'

const MB = 1024 * 1024
const MAX_ROWS = 40_000

/** Samples the server's RSS every 100 ms while `work` runs; the peak, bytes. */
async function peakRss(server: ServerProcess, work: () => Promise<unknown>): Promise<number> {
  let peak = server.rss()
  const timer = setInterval(() => {
    peak = Math.max(peak, server.rss())
  }, 100)
  try {
    await work()
  } finally {
    clearInterval(timer)
  }
  return Math.max(peak, server.rss())
}

describe('abuse of the data API', () => {
  let database: TestDatabase<EnergyDatabase>
  let server: ServerProcess
  let key: string
  let all: { csv: string; raw: string }

  beforeAll(async () => {
    database = await testDatabase(month)
    key = await apiKey(database.db, ['*'], 'abuse')
    server = await startEnergyProcess({
      ENERGY_DATABASE_URL: database.url,
      ENERGY_RATE_LIMIT_KEY: '100000',
      ENERGY_MAX_ROWS: String(MAX_ROWS),
      // one key holds every stream of these tests (the cap per credential is tested on its own)
      ENERGY_MAX_STREAMS_PER_CREDENTIAL: '1000',
    })
    // every meter, a month of quarter hours: far over the row limit
    all = {
      csv: await manySlicesTarget(database.db, 'csv', 1000),
      raw: await manySlicesTarget(database.db, 'raw', 1000),
    }
  })
  afterAll(async () => {
    await server?.stop()
    await database?.close()
  })

  it('refuses a request over the row limit with 422 and guidance, before sending anything', async () => {
    const response = await fetch(`${server.url}${all.csv}`, { headers: { 'x-api-key': key } })
    expect(response.status).toBe(422)
    const [issue] = ((await response.json()) as { detail: Array<{ type: string; msg: string }> }).detail
    expect(issue?.type).toBe('too_many_rows')
    expect(issue?.msg).toMatch(
      /more than the 40000 allowed: narrow start_datetime\/end_datetime, choose a coarser aggregation/,
    )
    // under the limit (13 meters) the same month streams
    const fewer = await fetch(`${server.url}${await manySlicesTarget(database.db, 'csv', 13)}`, {
      headers: { 'x-api-key': key },
    })
    expect(fewer.status).toBe(200)
    await fewer.arrayBuffer()
  })

  it('streams a huge window (ten thousand years) in a bounded time and memory', async () => {
    const target =
      '/data/pv?start_datetime=0001-01-01%2000:00:00&end_datetime=9998-12-31%2000:00:00&aggregation=15%20m&data_format=csv'
    const before = server.rss()
    const started = performance.now()
    let answer: Awaited<ReturnType<typeof download>> | undefined
    const peak = await peakRss(server, async () => {
      answer = await download(server.url, target, { 'x-api-key': key })
    })
    const ms = performance.now() - started
    expect(answer?.status).toBe(200)
    expect(answer?.complete).toBe(true)
    process.stdout.write(
      `energy abuse: ten-thousand-year window ${answer?.body.length} bytes in ${ms.toFixed(0)} ms, RSS ${(before / MB).toFixed(0)} -> peak ${(peak / MB).toFixed(0)} MB\n`,
    )
  })

  it('holds a slow reader of a large export in bounded memory (backpressure)', async () => {
    const target = await manySlicesTarget(database.db, 'raw', 13)
    const whole = await download(server.url, target, { 'x-api-key': key })
    expect(whole.complete).toBe(true)
    const before = server.rss()
    // 64 kB then a 100 ms pause: about 0.6 MB/s, for three seconds, then the client gives up
    let read = 0
    const peak = await peakRss(server, () =>
      download(server.url, target, { 'x-api-key': key }, (response, received) => {
        read = received
        response.pause()
        if (received > 2 * MB) response.destroy()
        else setTimeout(() => response.resume(), 100)
      }),
    )
    expect(read).toBeLessThan(whole.body.length / 2)
    expect(peak - before).toBeLessThan(48 * MB)
    process.stdout.write(
      `energy abuse: slow reader of a ${(whole.body.length / MB).toFixed(1)} MB export read ${(read / MB).toFixed(1)} MB; ` +
        `RSS ${(before / MB).toFixed(0)} -> peak ${(peak / MB).toFixed(0)} MB\n`,
    )
  })

  it('holds 30 concurrent stalled streams in bounded memory and serves 50 concurrent requests meanwhile', async () => {
    const target = await manySlicesTarget(database.db, 'raw', 13)
    const before = server.rss()
    const responses: Array<import('node:http').IncomingMessage> = []
    let asked = 0
    let heapUsed = 0
    let concurrent = 0
    const peak = await peakRss(server, async () => {
      const streams = Array.from({ length: 30 }, () =>
        download(server.url, target, { 'x-api-key': key }, (response) => {
          // read the first chunk, then nothing: each stream stalls with its export open
          if (!responses.includes(response)) {
            responses.push(response)
            response.pause()
          }
        }),
      )
      while (responses.length < 30) await sleep(50)
      await sleep(2000)
      // meanwhile the server answers 50 concurrent ordinary requests, three rounds of them
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            download(
              server.url,
              `/data/pv?start_datetime=2025-05-${String(10 + (i % 10)).padStart(2, '0')}%2000:00:00&end_datetime=2025-05-${String(10 + (i % 10)).padStart(2, '0')}%2023:45:00`,
              { 'x-api-key': key },
            ),
          ),
        )
        expect(answers.every((a) => a.status === 200 && a.complete)).toBe(true)
        concurrent += answers.length
      }
      heapUsed = await scrapeMetric(server.url, 'nodejs_heap_size_used_bytes')
      asked = 30 * (await download(server.url, target, { 'x-api-key': key })).body.length
      for (const response of responses) response.destroy()
      await Promise.all(streams)
    })
    // without backpressure the 173 MB asked would all be buffered
    expect(peak - before).toBeLessThan(120 * MB)
    process.stdout.write(
      `energy abuse: 30 stalled streams asking ${(asked / MB).toFixed(0)} MB in all, ${concurrent} requests 50 at a time meanwhile; live heap ${(heapUsed / MB).toFixed(0)} MB; RSS ${(before / MB).toFixed(0)} -> peak ${(peak / MB).toFixed(0)} MB\n`,
    )
  })
})

describe('concurrent exports per process', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startHarness({ data: month, settings: { maxStreams: 3, rateLimitKey: 10_000 }, listen: true })
  })
  afterAll(async () => h?.close())

  it('answers 503 with Retry-After past the cap, keeps serving single-slice requests, and frees a place when a stream ends', async () => {
    const key = await h.key(['*'], 'streams')
    // 6 MB each: more than the socket buffers hold, so a stalled one stays open on the server
    const target = await manySlicesTarget(h.db, 'raw', 13)
    const stalled: Array<import('node:http').IncomingMessage> = []
    const open = Array.from({ length: 3 }, () =>
      download(h.base, target, { 'x-api-key': key }, (response) => {
        if (!stalled.includes(response)) stalled.push(response)
        response.pause()
      }),
    )
    while (stalled.length < 3) await sleep(20)
    const refused = await fetch(`${h.base}${target}`, { headers: { 'x-api-key': key } })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(await refused.json()).toEqual({ detail: 'Too many exports in progress; retry shortly' })
    // a day is one slice: not an export, never refused
    const day = await fetch(
      `${h.base}/data/pv?start_datetime=2025-05-10%2000:00:00&end_datetime=2025-05-10%2023:45:00`,
      {
        headers: { 'x-api-key': key },
      },
    )
    expect(day.status).toBe(200)
    await day.arrayBuffer()
    // the first to stall is not necessarily the first asked: wait for whichever ends
    stalled[0]?.destroy()
    await Promise.race(open)
    await sleep(50)
    const admitted = await download(h.base, target, { 'x-api-key': key })
    expect(admitted.status).toBe(200)
    expect(admitted.complete).toBe(true)
    for (const response of stalled) response.destroy()
    await Promise.all(open)
  })
})

describe('per-key request rate', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startHarness({ settings: { rateLimitKey: 5 } })
  })
  afterAll(async () => h?.close())

  it('answers 429 with Retry-After past the limit, for that key only', async () => {
    const key = await h.key(['*'], 'rate')
    const other = await h.key(['*'], 'other')
    const ask = (k: string) => h.app.inject({ url: '/metadata/meters/', headers: { 'x-api-key': k } })
    for (let i = 0; i < 5; i++) expect((await ask(key)).statusCode).toBe(200)
    const over = await ask(key)
    expect(over.statusCode).toBe(429)
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0)
    expect(over.json().detail).toMatch(/^Rate limit exceeded: at most 5 requests a minute/)
    expect((await ask(other)).statusCode).toBe(200)
  })
})

describe('the per-address rate of public routes behind a reverse proxy (ENERGY_TRUSTED_PROXIES)', () => {
  /** /auth/public as a client behind the proxy at 10.1.2.3 asks for it, naming itself in the header. */
  const ask = (h: Harness, forwardedFor: string) =>
    h.app.inject({ url: '/auth/public', remoteAddress: '10.1.2.3', headers: { 'x-forwarded-for': forwardedFor } })

  it('behind a trusted proxy each client has its own limit, and cannot forge another address', async () => {
    const h = await startHarness({ settings: { rateLimitPublic: 3, trustedProxies: ['10.1.2.0/24'] } })
    try {
      // a client prepending addresses of its own choosing is still counted as itself
      for (const forged of ['203.0.113.7', '192.0.2.1, 203.0.113.7', '192.0.2.2, 203.0.113.7']) {
        expect((await ask(h, forged)).statusCode).toBe(200)
      }
      expect((await ask(h, '192.0.2.3, 203.0.113.7')).statusCode).toBe(429)
      // everyone else behind the same proxy is served
      expect((await ask(h, '198.51.100.9')).statusCode).toBe(200)
    } finally {
      await h.close()
    }
  })

  it('without a trusted proxy, X-Forwarded-For is ignored: everyone behind it shares one address', async () => {
    const h = await startHarness({ settings: { rateLimitPublic: 3 } })
    try {
      for (const client of ['203.0.113.7', '203.0.113.8', '203.0.113.9']) {
        expect((await ask(h, client)).statusCode).toBe(200)
      }
      expect((await ask(h, '198.51.100.9')).statusCode).toBe(429)
    } finally {
      await h.close()
    }
  })
})

describe('failed authentications per address', () => {
  it('past the limit an address is refused with 429 before any check; valid keys from other addresses are served', async () => {
    const h = await startHarness({ settings: { rateLimitFailedAuth: 5 } })
    try {
      const key = await h.key(['*'], 'valid')
      const ask = (value: string, remoteAddress = '203.0.113.50') =>
        h.app.inject({ url: '/metadata/meters/', remoteAddress, headers: { 'x-api-key': value } })
      const statuses: number[] = []
      for (let i = 0; i < 300; i++) statuses.push((await ask(`edk_${String(i).padStart(43, 'A')}`)).statusCode)
      // the limit's worth checked (and one more, which found the limit), then refused unchecked
      expect(statuses.filter((s) => s === 401)).toHaveLength(6)
      expect(statuses.filter((s) => s === 429)).toHaveLength(294)
      const refused = await ask(key)
      expect(refused.statusCode).toBe(429)
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
      expect((await ask(key, '198.51.100.7')).statusCode).toBe(200)
      // valid keys never count: many from one address stay served
      for (let i = 0; i < 20; i++) expect((await ask(key, '198.51.100.8')).statusCode).toBe(200)
    } finally {
      await h.close()
    }
  })
})

describe('export places per credential, and clients that stop reading', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startHarness({
      data: month,
      settings: { maxStreams: 10, maxStreamsPerCredential: 2, streamIdleSeconds: 1, rateLimitKey: 10_000 },
      listen: true,
    })
  })
  afterAll(async () => h?.close())

  it('one key holds at most its share (429), others still stream; a stalled stream is closed and frees its place', async () => {
    const greedy = await h.key(['*'], 'greedy')
    const other = await h.key(['*'], 'other')
    // 6 MB each: more than the socket buffers hold, so a client that stops reading stalls the server
    const target = await manySlicesTarget(h.db, 'raw', 13)
    const stalled: Array<import('node:http').IncomingMessage> = []
    const held = Array.from({ length: 2 }, () =>
      download(h.base, target, { 'x-api-key': greedy }, (response) => {
        if (stalled.includes(response)) return
        stalled.push(response)
        response.pause()
      }),
    )
    while (stalled.length < 2) await sleep(20)
    const third = await fetch(`${h.base}${target}`, { headers: { 'x-api-key': greedy } })
    expect(third.status).toBe(429)
    expect(third.headers.get('retry-after')).toBe('5')
    await third.arrayBuffer()
    const theirs = await download(h.base, target, { 'x-api-key': other })
    expect([theirs.status, theirs.complete]).toEqual([200, true])
    // nobody reads the held streams: the server closes them (after a second here), freeing a place
    // for the same key with no help from its client
    let again = await download(h.base, target, { 'x-api-key': greedy })
    for (let tries = 0; again.status === 429 && tries < 100; tries++) {
      await sleep(100)
      again = await download(h.base, target, { 'x-api-key': greedy })
    }
    expect([again.status, again.complete]).toEqual([200, true])
    // what the stalled clients then read was cut short: the server closed them, they never ended
    for (const response of stalled) response.resume()
    const cut = await Promise.all(held)
    expect(cut.filter((answer) => !answer.complete).length).toBeGreaterThanOrEqual(1)
  })
})

describe('a slow database, and a client that reads', () => {
  it('keeps streaming while the database takes longer than the idle limit to answer', async () => {
    const proxies: Array<Awaited<ReturnType<typeof startTcpProxy>>> = []
    const h = await startHarness({
      data: month,
      settings: { streamIdleSeconds: 0.3 },
      listen: true,
      // the app reads through a proxy that holds each of the database's answers 0.4 s
      connect: async (database) => {
        const target = new URL(database.url)
        const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432))
        proxies.push(proxy)
        // a connection opened meanwhile waits on several held answers: more than the default 5 s
        return createDatabase<EnergyDatabase>(proxy.rewrite(database.url), { max: 4, connectionTimeoutMillis: 60_000 })
      },
    })
    try {
      const target = await manySlicesTarget(h.db, 'csv', 1)
      for (const proxy of proxies) proxy.slow(400)
      const started = Date.now()
      const answer = await download(h.base, target, { 'x-api-key': await h.key(['*']) })
      expect([answer.status, answer.complete, answer.error]).toEqual([200, true, undefined])
      expect(answer.body.toString('utf8').trim().split('\n').length).toBeGreaterThan(1000)
      // the answer waited on the database longer than the idle limit, more than once
      expect(Date.now() - started).toBeGreaterThan(800)
    } finally {
      await h.close()
      for (const proxy of proxies) await proxy.close()
    }
  })
})
