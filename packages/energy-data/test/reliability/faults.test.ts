import { Agent, request } from 'node:http'
import { createDatabase } from '@campus/shared'
import { startTcpProxy, type TcpProxy, type TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EnergyDatabase } from '../../src/db/schema.ts'
import { manySlicesTarget, month } from '../fixtures/month.ts'
import {
  apiKey,
  type Download,
  download,
  type Harness,
  sleep,
  startEnergyProcess,
  startHarness,
  testDatabase,
} from '../harness.ts'

/** What a cut stream must never be: a body that parses as a whole answer. */
function looksComplete(format: 'raw' | 'csv', body: string): boolean {
  if (format === 'raw') {
    try {
      JSON.parse(body)
      return true
    } catch {
      return false
    }
  }
  return body.endsWith('\r\n')
}

describe('the database connection cut mid-request and mid-stream', () => {
  let h: Harness
  let proxy: TcpProxy
  let base: string
  let key: string

  beforeAll(async () => {
    h = await startHarness({
      data: month,
      settings: { rateLimitKey: 100_000 },
      listen: true,
      // the app reaches the database through a proxy that can cut it
      async connect(database) {
        const url = new URL(database.url)
        proxy = await startTcpProxy(url.hostname, Number(url.port || 5432))
        // a short connection timeout: a refused database shows quickly
        return createDatabase<EnergyDatabase>(proxy.rewrite(database.url), { max: 4, connectionTimeoutMillis: 2000 })
      },
    })
    base = h.base
    key = await h.key(['*'], 'faults')
  })
  afterAll(async () => {
    await h?.close()
    await proxy?.close()
  })

  for (const format of ['raw', 'csv'] as const) {
    it(`aborts a ${format} stream cut halfway, never ends it cleanly, and recovers by itself`, async () => {
      const target = await manySlicesTarget(h.db, format)
      const whole = await download(base, target, { 'x-api-key': key })
      expect(whole.status).toBe(200)
      expect(whole.complete).toBe(true)
      expect(whole.headers['transfer-encoding']).toBe('chunked')

      // read half, stop reading, cut the database, then read on
      let cutAt = 0
      const cut: Download = await download(base, target, { 'x-api-key': key }, (response, received) => {
        if (cutAt || received < whole.body.length / 2) return
        cutAt = received
        response.pause()
        proxy.cut()
        setTimeout(() => response.resume(), 300)
      })
      expect(cut.status).toBe(200)
      expect(cutAt).toBeGreaterThan(0)
      expect(cut.complete).toBe(false)
      expect(cut.body.length).toBeLessThan(whole.body.length)
      expect(looksComplete(format, cut.body.toString('utf8'))).toBe(false)

      // while the database is away: a new request fails before its first byte, readiness says 503
      const refused = await fetch(`${base}${target}`, { headers: { 'x-api-key': key } })
      expect(refused.status).toBeGreaterThanOrEqual(500)
      expect(refused.headers.get('content-type')).toMatch(/^application\/json/)
      expect(Object.keys((await refused.json()) as object)).toEqual(['detail'])
      expect((await fetch(`${base}/health/ready`)).status).toBe(503)

      // the same app answers again once the connection returns, without a restart
      proxy.restore()
      const restored = performance.now()
      let again: Download | undefined
      for (let i = 0; i < 50; i++) {
        again = await download(base, target, { 'x-api-key': key })
        if (again.status === 200) break
        await sleep(100)
      }
      const recoveryMs = performance.now() - restored
      expect(again?.status).toBe(200)
      expect(again?.complete).toBe(true)
      expect(again?.body.equals(whole.body)).toBe(true)
      expect((await fetch(`${base}/health/ready`)).status).toBe(200)
      process.stdout.write(
        `energy faults (${format}): ${whole.body.length} bytes whole, cut after ${cutAt}, ` +
          `client got ${cut.body.length} (${cut.error ?? 'incomplete'}), before-first-byte ${refused.status}, ` +
          `recovered in ${recoveryMs.toFixed(0)} ms\n`,
      )
    })
  }
})

describe('SIGTERM during load on a server process', () => {
  let database: TestDatabase<EnergyDatabase>
  beforeAll(async () => {
    database = await testDatabase(month)
  })
  afterAll(async () => database?.close())

  it('finishes the requests in flight (a long stream included), refuses new ones and exits 0', async () => {
    const key = await apiKey(database.db, ['*'], 'sigterm')
    // six exports of one key at once: past the default cap per credential
    const server = await startEnergyProcess({
      ENERGY_DATABASE_URL: database.url,
      ENERGY_RATE_LIMIT_KEY: '100000',
      ENERGY_MAX_STREAMS_PER_CREDENTIAL: '8',
    })
    try {
      const target = await manySlicesTarget(database.db, 'csv')
      const whole = await download(server.url, target, { 'x-api-key': key })
      expect(whole.complete).toBe(true)

      // in flight: the long CSV and five JSON exports, each read slowly (a pause after every chunk);
      // the signal goes once every one of them has its first bytes
      const targets = [
        target,
        ...(await Promise.all([1, 2, 3, 4, 5].map(() => manySlicesTarget(database.db, 'raw', 3)))),
      ]
      let started = 0
      let signalled = false
      const inFlight = targets.map((t) => {
        let first = true
        return download(server.url, t, { 'x-api-key': key }, (response) => {
          response.pause()
          setTimeout(() => response.resume(), 20)
          if (first) {
            first = false
            started++
          }
          if (started === targets.length && !signalled) {
            signalled = true
            server.child.kill('SIGTERM')
          }
        })
      })
      while (!signalled) await sleep(10)
      await sleep(100)
      const late = await download(server.url, '/auth/public', {})
      const answers = await Promise.all(inFlight)
      const code = await server.exited

      const [stream] = answers
      expect(stream?.body.equals(whole.body)).toBe(true)
      for (const answer of answers) {
        expect(answer.status).toBe(200)
        expect(answer.complete).toBe(true)
        JSON.parse(answer === stream ? '[]' : answer.body.toString('utf8'))
      }
      // a request sent after the signal is refused: no connection, or 503 on a kept-alive one
      expect(late.status === 0 || late.status === 503).toBe(true)
      expect(code).toBe(0)
      process.stdout.write(
        `energy SIGTERM: ${answers.length} requests in flight (${answers
          .map((a) => a.body.length)
          .join(', ')} bytes) all complete, request after the signal: ${late.status || late.error}, exit ${code}\n`,
      )
    } finally {
      await server.stop()
    }
  })

  it('stopped under a load of short requests on kept-alive connections: no error is logged, each answer is whole or refused', async () => {
    const key = await apiKey(database.db, ['*'], 'sigterm-load')
    const server = await startEnergyProcess({ ENERGY_DATABASE_URL: database.url, ENERGY_RATE_LIMIT_KEY: '1000000' })
    try {
      const agent = new Agent({ keepAlive: true, maxSockets: 64 })
      const day = (i: number) =>
        `/data/pv?start_datetime=2025-05-${String(1 + (i % 28)).padStart(2, '0')}%2000:00:00&end_datetime=2025-05-${String(1 + (i % 28)).padStart(2, '0')}%2023:45:00`
      const outcomes = new Map<string, number>()
      const count = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
      let stopAt = Number.POSITIVE_INFINITY
      // 64 clients, each sending one request after another until half a second past the signal
      const client = async (id: number) => {
        for (let i = id; performance.now() < stopAt; i += 64) {
          const answer = await new Promise<string>((resolve) => {
            const req = request(`${server.url}${day(i)}`, { agent, headers: { 'x-api-key': key } }, (response) => {
              response.resume()
              response.on('end', () => resolve(String(response.statusCode)))
              response.on('error', () => resolve('cut'))
            })
            req.on('error', () => resolve('refused'))
            req.end()
          })
          count(answer)
          if (answer === 'refused') await sleep(10)
        }
      }
      const clients = Array.from({ length: 64 }, (_, id) => client(id))
      while ((outcomes.get('200') ?? 0) < 500) await sleep(10)
      server.child.kill('SIGTERM')
      stopAt = performance.now() + 500
      await Promise.all(clients)
      agent.destroy()
      const code = await server.exited
      const errors = server.logs.filter(
        (line) => line.startsWith('{') && (JSON.parse(line) as { level: number }).level >= 50,
      )
      expect(errors).toEqual([])
      expect(code).toBe(0)
      // a request is answered whole (200), refused while closing (503), or finds no server: never cut
      expect([...outcomes.keys()].filter((outcome) => !['200', '503', 'refused'].includes(outcome))).toEqual([])
      process.stdout.write(`energy SIGTERM under load: ${JSON.stringify(Object.fromEntries(outcomes))}, exit ${code}\n`)
    } finally {
      await server.stop()
    }
  })
})
