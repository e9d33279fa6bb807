/**
 * CORS as GitLab answers it (config/application.rb, Rack::Cors): the token, revocation, token
 * info, userinfo, discovery and key endpoints and /api/* answer any origin without credentials;
 * the pages answer no other origin, and OPTIONS is 404 there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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

const ORIGIN = 'https://spa.example'

function preflight(url: string, method: string, headers?: string) {
  return server.app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin: ORIGIN,
      'access-control-request-method': method,
      ...(headers ? { 'access-control-request-headers': headers } : {}),
    },
  })
}

describe("preflights of GitLab's CORS endpoints", () => {
  it.each([
    ['/oauth/token', 'POST', 'POST, OPTIONS', 'Authorization, X-CSRF-Token, X-Requested-With, DPoP'],
    ['/oauth/revoke', 'POST', 'POST, OPTIONS', 'Authorization, X-CSRF-Token, X-Requested-With, DPoP'],
    ['/oauth/par', 'POST', 'POST, OPTIONS', 'Authorization, X-CSRF-Token, X-Requested-With, DPoP'],
    ['/oauth/token/info', 'GET', 'GET, HEAD, OPTIONS', 'Authorization, DPoP'],
    ['/oauth/userinfo', 'GET', 'GET, HEAD, POST, OPTIONS', 'Authorization, DPoP'],
    ['/oauth/discovery/keys', 'GET', 'GET, HEAD, OPTIONS', ''],
    ['/.well-known/openid-configuration', 'GET', 'GET, HEAD, OPTIONS', ''],
    ['/.well-known/oauth-authorization-server', 'GET', 'GET, HEAD, OPTIONS', ''],
    ['/.well-known/oauth-protected-resource', 'GET', 'GET, HEAD, OPTIONS', ''],
  ])('%s: any origin, %s allowed, the listed headers, no credentials', async (url, method, methods, headers) => {
    const res = await preflight(url, method, 'authorization')
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe('*')
    expect(res.headers['access-control-allow-methods']).toBe(methods)
    expect(res.headers['access-control-allow-headers']).toBe(headers)
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
    expect(res.headers['access-control-max-age']).toBe('7200')
  })

  it('/api/*: any origin, any method, the headers the preflight asks for, no credentials', async () => {
    for (const url of ['/api/v4/user', `/api/v4/users/${f.bob.id}`, '/api/v4/personal_access_tokens']) {
      const res = await preflight(url, 'PUT', 'authorization, private-token, content-type')
      expect(res.statusCode, url).toBe(204)
      expect(res.headers['access-control-allow-origin'], url).toBe('*')
      expect(res.headers['access-control-allow-methods'], url).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS')
      expect(res.headers['access-control-allow-headers'], url).toBe('authorization, private-token, content-type')
      expect(res.headers['access-control-allow-credentials'], url).toBeUndefined()
    }
  })
})

describe('cross-origin answers carry the headers a script needs', () => {
  it('a token answer and an API answer name any origin; the API exposes its ids and pagination headers', async () => {
    const { access_token } = await issueToken(server, { applicationId: f.web.id, userId: f.alice.id, scopes: ['api'] })
    const api = await server.app.inject({
      url: '/api/v4/user',
      headers: { origin: ORIGIN, authorization: `Bearer ${access_token}` },
    })
    expect(api.statusCode).toBe(200)
    expect(api.headers['access-control-allow-origin']).toBe('*')
    expect(api.headers['access-control-expose-headers']).toContain('X-Request-Id')
    expect(api.headers['access-control-allow-credentials']).toBeUndefined()

    const token = await server.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=authorization_code&code=nope&client_id=x',
    })
    expect(token.statusCode).toBeGreaterThanOrEqual(400)
    expect(token.headers['access-control-allow-origin']).toBe('*')
  })
})

describe('pages answer no other origin', () => {
  it.each(['/users/sign_in', '/oauth/authorize', '/profile/applications', '/admin/users', '/oauth/introspect'])(
    '%s: no CORS headers, and OPTIONS is 404',
    async (url) => {
      const res = await preflight(url, 'POST', 'content-type')
      expect(res.statusCode).toBe(404)
      expect(res.headers['access-control-allow-origin']).toBeUndefined()
      const page = await server.app.inject({ url, headers: { origin: ORIGIN } })
      expect(page.headers['access-control-allow-origin']).toBeUndefined()
    },
  )
})
