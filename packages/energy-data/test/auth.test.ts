import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKey, revokeApiKeys } from '../src/repositories/api-keys.ts'
import { type Harness, startHarness } from './harness.ts'

let h: Harness
let all: string
let dataOnly: string
let expired: string
let revoked: string

beforeAll(async () => {
  h = await startHarness({ settings: { rateLimitPublic: 5, rateLimitKey: 1000 } })
  all = await h.key(['*'], 'all')
  dataOnly = await h.key(['/data/*', '/metadata/meters/*'], 'data')
  expired = (await createApiKey(h.db, { name: 'old', endpoints: ['*'], expiresAt: new Date(Date.now() - 1000) })).key
  const r = await createApiKey(h.db, { name: 'gone', endpoints: ['*'] })
  await revokeApiKeys(h.db, { id: r.record.id })
  revoked = r.key
})
afterAll(async () => h?.close())

const call = (url: string, key?: string) =>
  h.app.inject({ url, headers: key === undefined ? {} : { 'x-api-key': key } })

describe('x-api-key', () => {
  it('a missing, unknown, malformed, expired or revoked key is 401 with WWW-Authenticate: APIKey', async () => {
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'Not authenticated'],
      ['', 'Not authenticated'],
      ['edk_' + 'A'.repeat(43), 'Invalid API key'],
      ['not-a-key', 'Invalid API key'],
      [expired, 'API key expired'],
      [revoked, 'API key revoked'],
    ]
    for (const [key, detail] of cases) {
      for (const url of ['/auth/protected', '/data/pv', '/metadata/meters/', '/metadata/dataloggers/x']) {
        const res = await call(url, key)
        expect(res.statusCode, `${url} ${detail}`).toBe(401)
        expect(res.headers['www-authenticate']).toBe('APIKey')
        expect(res.json()).toEqual({ detail })
      }
    }
  })

  it('checks the key before the query, so anonymous callers learn nothing from validation', async () => {
    const res = await call('/data/pv?aggregation=nonsense')
    expect(res.statusCode).toBe(401)
  })

  it('a valid key outside its endpoint patterns is 403', async () => {
    const res = await call('/metadata/dataloggers/', dataOnly)
    expect(res.statusCode).toBe(403)
    expect(res.json()).toEqual({ detail: 'This API key may not call this endpoint' })
    expect((await call('/data/pv', dataOnly)).statusCode).toBe(200)
    expect((await call('/metadata/meters/', dataOnly)).statusCode).toBe(200)
    expect((await call('/metadata/dataloggers/', all)).statusCode).toBe(200)
  })

  it('/auth/protected accepts any valid key and names it', async () => {
    const res = await call('/auth/protected', dataOnly)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.json()).toEqual({ status: 'authenticated', key: 'data' })
  })

  it('/auth/public needs no key', async () => {
    const res = await call('/auth/public')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 'public' })
    expect(res.headers['cache-control']).toMatch(/^public, max-age=\d+$/)
    const cached = await h.app.inject({ url: '/auth/public', headers: { 'if-none-match': res.headers.etag as string } })
    expect(cached.statusCode).toBe(304)
  })

  it('/auth/apikey/endpoints lists what the key may call', async () => {
    const limited = (await call('/auth/apikey/endpoints', dataOnly)).json() as string[]
    expect(limited).toContain('/data/pv')
    expect(limited).toContain('/data/meters')
    expect(limited).toContain('/metadata/meters/{uuid}')
    expect(limited).toContain('/metadata/meters/next')
    expect(limited).toContain('/auth/public')
    expect(limited).not.toContain('/metadata/dataloggers/')
    const full = (await call('/auth/apikey/endpoints', all)).json() as string[]
    expect(full).toContain('/metadata/dataloggers/')
    expect(full).toEqual([...full].sort())
    expect(full).not.toContain('/health/live')
  })

  it('revoking takes effect on the next request', async () => {
    const r = await createApiKey(h.db, { name: 'soon-gone', endpoints: ['*'] })
    expect((await call('/auth/protected', r.key)).statusCode).toBe(200)
    await revokeApiKeys(h.db, { name: 'soon-gone' })
    expect((await call('/auth/protected', r.key)).statusCode).toBe(401)
  })

  it('records when a key was last used', async () => {
    const r = await createApiKey(h.db, { name: 'used', endpoints: ['*'] })
    await call('/auth/protected', r.key)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const row = await h.db
      .selectFrom('api_keys')
      .select('last_used_at')
      .where('id', '=', r.record.id)
      .executeTakeFirst()
    expect(row?.last_used_at).toBeInstanceOf(Date)
  })

  it('stores only the SHA-256 digest of a key', async () => {
    const rows = await h.db.selectFrom('api_keys').selectAll().execute()
    const text = JSON.stringify(rows)
    expect(text).not.toContain(all)
    expect(rows.every((r) => r.digest.length === 32)).toBe(true)
  })
})

describe('rate limits', () => {
  it('public endpoints answer 429 with Retry-After past their per-address limit', async () => {
    const statuses: number[] = []
    let last: Awaited<ReturnType<typeof call>> | undefined
    for (let i = 0; i < 7; i++) {
      last = await h.app.inject({ url: '/metadata/meters/next', remoteAddress: '10.9.9.9' })
      statuses.push(last.statusCode)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429])
    expect(Number(last?.headers['retry-after'])).toBeGreaterThan(0)
    expect((last?.json() as { detail: string } | undefined)?.detail).toMatch(/^Rate limit exceeded/)
    // another address is counted on its own
    expect((await h.app.inject({ url: '/metadata/meters/next', remoteAddress: '10.9.9.10' })).statusCode).toBe(200)
    // the platform's probes are never limited
    for (let i = 0; i < 8; i++) {
      expect((await h.app.inject({ url: '/health/live', remoteAddress: '10.9.9.9' })).statusCode).toBe(200)
    }
  })

  it('counts requests per key on protected endpoints', async () => {
    const strict = await startHarness({ settings: { rateLimitKey: 3 } })
    try {
      const key = await strict.key(['*'])
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) {
        statuses.push((await strict.app.inject({ url: '/auth/protected', headers: { 'x-api-key': key } })).statusCode)
      }
      expect(statuses).toEqual([200, 200, 200, 429])
      const other = await strict.key(['*'], 'other')
      expect((await strict.app.inject({ url: '/auth/protected', headers: { 'x-api-key': other } })).statusCode).toBe(
        200,
      )
    } finally {
      await strict.close()
    }
  })
})

describe('ENERGY_REQUIRE_KEY_EVERYWHERE', () => {
  it('makes the public endpoints ask for a key, but not the probes', async () => {
    const locked = await startHarness({ settings: { requireKeyEverywhere: true } })
    try {
      expect((await locked.app.inject('/auth/public')).statusCode).toBe(401)
      expect((await locked.app.inject('/metadata/meters/next')).statusCode).toBe(401)
      expect((await locked.app.inject('/health/live')).statusCode).toBe(200)
      const key = await locked.key(['/data/*'])
      const res = await locked.app.inject({ url: '/auth/public', headers: { 'x-api-key': key } })
      expect(res.statusCode).toBe(200)
    } finally {
      await locked.close()
    }
  })
})

describe('without an OAuth server (ENERGY_OAUTH_ISSUER unset)', () => {
  it('a bearer token alone is 401 saying to use a key; beside a key it is ignored', async () => {
    const token = await h.app.inject({ url: '/auth/protected', headers: { authorization: 'Bearer cmpa_x' } })
    expect(token.statusCode).toBe(401)
    expect(token.headers['www-authenticate']).toBe('APIKey')
    expect(token.json()).toEqual({ detail: 'Bearer tokens are not accepted here: use x-api-key' })
    const both = await h.app.inject({
      url: '/auth/protected',
      headers: { authorization: 'Bearer cmpa_x', 'x-api-key': all },
    })
    expect(both.statusCode).toBe(200)
  })
})

describe('OpenAPI security schemes', () => {
  it('API keys only without an OAuth server; with one, OAuth 2 (code + PKCE at its URLs) beside them on every keyed route', async () => {
    const plain = (await call('/openapi.json')).json()
    expect(Object.keys(plain.components.securitySchemes)).toEqual(['APIKeyHeader'])
    expect(plain.paths['/data/pv'].get.security).toEqual([{ APIKeyHeader: [] }])

    const withOAuth = await startHarness({
      settings: {
        oauth: {
          issuer: 'https://login.example',
          clientId: 'energy-data',
          clientSecret: 'secret',
          cacheSeconds: 5,
          staleSeconds: 60,
        },
      },
    })
    try {
      const doc = (await withOAuth.app.inject({ url: '/openapi.json' })).json()
      expect(doc.components.securitySchemes.OAuth2).toEqual({
        type: 'oauth2',
        description: expect.any(String),
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://login.example/oauth/authorize',
            tokenUrl: 'https://login.example/oauth/token',
            scopes: { read_energy: expect.any(String) },
          },
        },
      })
      expect(doc.paths['/data/pv'].get.security).toEqual([{ APIKeyHeader: [] }, { OAuth2: ['read_energy'] }])
      expect(doc.paths['/chart/fotovoltaico'].get.security).toEqual([])
      // the key-only route of the first app is untouched by the second (no shared array mutated)
      expect((await call('/openapi.json')).json().paths['/data/pv'].get.security).toEqual([{ APIKeyHeader: [] }])
    } finally {
      await withOAuth.close()
    }
  })
})

describe('answers made for a credential are kept by no cache', () => {
  it('keyed answers, refusals included, are Cache-Control: private, no-store and vary by the credential headers', async () => {
    const keyed: Array<[string, string | undefined, number]> = [
      ['/data/pv', all, 200],
      ['/metadata/meters/', all, 200],
      ['/auth/protected', all, 200],
      ['/auth/apikey/endpoints', all, 200],
      ['/data/pv', undefined, 401],
      ['/auth/protected', 'not-a-key', 401],
    ]
    for (const [url, key, status] of keyed) {
      const res = await call(url, key)
      expect([url, res.statusCode]).toEqual([url, status])
      expect(res.headers['cache-control'], url).toBe('private, no-store')
      const vary = String(res.headers.vary).toLowerCase()
      expect(vary, url).toContain('x-api-key')
      expect(vary, url).toContain('authorization')
    }
    // a public view keeps its own, public caching
    const chart = await call('/chart/fotovoltaico')
    expect(chart.headers['cache-control']).toMatch(/^public, max-age=\d+$/)
  })
})
