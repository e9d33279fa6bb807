/** Headers every client and intermediary relies on: HSTS on https, no caching of personal data. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import { defaultSettings } from '../src/config.ts'
import { issueToken, seed, startServer, type TestServer } from './helpers.ts'

let server: TestServer
let f: Awaited<ReturnType<typeof seed>>

beforeAll(async () => {
  server = await startServer({}, { listen: false })
  f = await seed(server.db, server.settings.secretKey)
})
afterAll(async () => {
  await server?.close()
})

describe('RFC 6797: HSTS when the issuer is https', () => {
  it('every answer of an https issuer carries Strict-Transport-Security; an http issuer sends none', async () => {
    const secure = await buildApp({
      database: server.database,
      settings: defaultSettings({ issuer: 'https://auth.example' }),
    })
    try {
      for (const url of ['/users/sign_in', '/oauth/token/info', '/api/v4/user', '/.well-known/openid-configuration']) {
        const res = await secure.inject(url)
        expect(res.headers['strict-transport-security'], url).toBe('max-age=63072000')
      }
    } finally {
      await secure.close()
    }
    expect((await server.app.inject('/users/sign_in')).headers['strict-transport-security']).toBeUndefined()
  })
})

describe('API and userinfo answers are never stored by a cache', () => {
  it('Cache-Control: no-store on /api/v4/* and /oauth/userinfo, answers and errors alike', async () => {
    const { access_token } = await issueToken(server, {
      applicationId: f.web.id,
      userId: f.alice.id,
      scopes: ['api', 'openid', 'email'],
    })
    const headers = { authorization: `Bearer ${access_token}` }
    for (const [url, withToken] of [
      ['/api/v4/user', true],
      [`/api/v4/users/${f.bob.id}`, true],
      ['/api/v4/personal_access_tokens', true],
      ['/oauth/userinfo', true],
      ['/api/v4/user', false],
      ['/oauth/userinfo', false],
    ] as const) {
      const res = await server.app.inject({ url, headers: withToken ? headers : {} })
      expect(res.statusCode, url).toBe(withToken ? 200 : 401)
      expect(res.headers['cache-control'], url).toBe('no-store')
    }
  })
})

describe('/metrics is private', () => {
  it('with METRICS_TOKEN the OAuth server wants the bearer token, even from loopback', async () => {
    const app = await buildApp({
      database: server.database,
      settings: defaultSettings({ metricsToken: 'metrics-secret-of-the-oauth-server' }),
    })
    try {
      expect((await app.inject('/metrics')).statusCode).toBe(401)
      const scraped = await app.inject({
        url: '/metrics',
        remoteAddress: '203.0.113.5',
        headers: { authorization: 'Bearer metrics-secret-of-the-oauth-server' },
      })
      expect(scraped.statusCode).toBe(200)
      expect(scraped.body).toContain('http_request_duration_seconds')
    } finally {
      await app.close()
    }
    expect((await server.app.inject({ url: '/metrics', remoteAddress: '203.0.113.5' })).statusCode).toBe(404)
  })
})
