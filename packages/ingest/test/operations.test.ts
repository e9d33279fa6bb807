/** The ingest's operations as the data API's: METRICS_TOKEN guards /metrics, trusted proxies name the client. */
import { afterAll, describe, expect, it } from 'vitest'
import { ingestDatabase, startIngest } from './support.ts'

const { database, writeKey } = await ingestDatabase()
afterAll(() => database.close())

describe('the ingest honours METRICS_TOKEN and its trusted proxies', () => {
  it('/metrics wants the bearer token METRICS_TOKEN names', async () => {
    const ingest = await startIngest(database, undefined, { app: { metricsToken: 'scraper-secret-of-32-characters!' } })
    try {
      const bare = await ingest.app.inject({ method: 'GET', url: '/metrics' })
      expect(bare.statusCode).toBe(401)
      const wrong = await ingest.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: 'Bearer nope' },
      })
      expect(wrong.statusCode).toBe(401)
      const right = await ingest.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: 'Bearer scraper-secret-of-32-characters!' },
      })
      expect(right.statusCode).toBe(200)
      expect(right.body).toContain('ingest_')
    } finally {
      await ingest.stop()
    }
  })

  it('behind a trusted proxy each client meets the failed-authentication limit on its own address; without one, X-Forwarded-For is ignored', async () => {
    const bad = (forwarded: string) => ({
      method: 'POST' as const,
      url: '/ingest/senml',
      headers: { 'x-api-key': 'edk_unknown', 'x-forwarded-for': forwarded, 'content-type': 'application/senml+json' },
      payload: '[]',
    })
    /** The responses to failing requests from one forwarded address, until a 429 (at most 5). */
    const untilRefused = async (ingest: Awaited<ReturnType<typeof startIngest>>, forwarded: string) => {
      const statuses: number[] = []
      while (statuses.at(-1) !== 429 && statuses.length < 5)
        statuses.push((await ingest.app.inject(bad(forwarded))).statusCode)
      return statuses
    }
    const behind = await startIngest(database, undefined, {
      failedAuthLimit: 2,
      app: { trustedProxies: ['127.0.0.1'] },
    })
    try {
      const first = await untilRefused(behind, '203.0.113.7')
      expect(first.at(-1)).toBe(429)
      // another client behind the same proxy is not refused for it
      expect((await behind.app.inject(bad('203.0.113.8'))).statusCode).toBe(401)
    } finally {
      await behind.stop()
    }
    const direct = await startIngest(database, undefined, { failedAuthLimit: 2 })
    try {
      expect((await untilRefused(direct, '203.0.113.9')).at(-1)).toBe(429)
      // a forged header does not make a new client
      expect((await direct.app.inject(bad('203.0.113.10'))).statusCode).toBe(429)
    } finally {
      await direct.stop()
    }
  })

  it('a valid write credential is rate limited too: past INGEST_RATE_LIMIT_CREDENTIAL packs a minute, 429 with Retry-After', async () => {
    const ingest = await startIngest(database, undefined, { app: { credentialLimit: 3 } })
    try {
      const post = () =>
        ingest.app.inject({
          method: 'POST',
          url: '/ingest/senml',
          headers: { 'x-api-key': writeKey, 'content-type': 'application/senml+json' },
          payload: '[]',
        })
      for (let i = 0; i < 3; i++) expect((await post()).statusCode).not.toBe(429)
      const refused = await post()
      expect(refused.statusCode).toBe(429)
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
      expect(refused.json().detail).toMatch(/at most 3 packs a minute for this credential/)
    } finally {
      await ingest.stop()
    }
  })
})
