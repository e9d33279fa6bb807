import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPersonalAccessToken, createUser } from '../src/accounts.ts'
import { basic, issueToken, seed, startServer, type TestServer } from './helpers.ts'

let server: TestServer
let f: Awaited<ReturnType<typeof seed>>

beforeAll(async () => {
  server = await startServer({}, { listen: false })
  f = await seed(server.db, server.settings.secretKey)
})
afterAll(async () => {
  await server?.close()
})

const get = (url: string, headers: Record<string, string> = {}) => server.app.inject({ method: 'GET', url, headers })
const bearer = (t: string) => ({ authorization: `Bearer ${t}` })
const tokenWith = async (scopes: string[], userId = f.alice.id) =>
  (await issueToken(server, { applicationId: f.web.id, userId, scopes })).access_token

describe('RFC 6750 2: how the token is sent', () => {
  it('Authorization: Bearer', async () => {
    const res = await get('/api/v4/user', bearer(await tokenWith(['read_user'])))
    expect(res.statusCode).toBe(200)
    expect(res.json().username).toBe('alice')
  })
  it('?access_token= query parameter', async () => {
    const res = await get(`/api/v4/user?access_token=${await tokenWith(['read_user'])}`)
    expect(res.statusCode).toBe(200)
  })
  it('?bearer_token= query parameter (accepted by GitLab), at the API and at token info', async () => {
    const t = await tokenWith(['read_user'])
    const res = await get(`/api/v4/user?bearer_token=${t}`)
    expect(res.statusCode).toBe(200)
    expect(res.json().username).toBe('alice')
    expect((await get(`/oauth/token/info?bearer_token=${t}`)).statusCode).toBe(200)
  })
  it('personal access token in PRIVATE-TOKEN, or as a Bearer token', async () => {
    const { token } = await createPersonalAccessToken(server.db, { username: 'bob', name: 'ci', scopes: ['api'] })
    expect((await get('/api/v4/user', { 'private-token': token })).json().username).toBe('bob')
    expect((await get('/api/v4/user', bearer(token))).json().username).toBe('bob')
  })
})

describe('RFC 6750 3.1: GitLab 401 and 403 bodies with WWW-Authenticate', () => {
  it('no token: 401 {"message":"401 Unauthorized"}', async () => {
    const res = await get('/api/v4/user')
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({ message: '401 Unauthorized' })
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="/)
  })
  it('unknown token: 401 invalid_token with the challenge', async () => {
    const res = await get('/api/v4/user', bearer('cmpa_unknown'))
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_token')
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]+", error="invalid_token", error_description="/)
  })
  it('expired token: 401 invalid_token', async () => {
    const t = await tokenWith(['api'])
    await sql`update access_tokens set expires_at = now() - interval '1 second' where scopes = array['api']`.execute(
      server.db,
    )
    const res = await get('/api/v4/user', bearer(t))
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({
      error: 'invalid_token',
      error_description: 'Token is expired. You can either do re-authorization or token refresh.',
    })
  })
  it('revoked token: 401 invalid_token', async () => {
    const t = await tokenWith(['read_api'])
    await sql`update access_tokens set revoked_at = now() where scopes = array['read_api']`.execute(server.db)
    const res = await get('/api/v4/user', bearer(t))
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_token')
  })
  it('expired or revoked personal access token: 401 invalid_token', async () => {
    // a token made for a day now past (new tokens must expire in the future)
    const expired = await createPersonalAccessToken(server.db, { username: 'alice', name: 'old', scopes: ['api'] })
    await sql`update personal_access_tokens set expires_at = '2020-01-01' where id = ${expired.id}`.execute(server.db)
    expect((await get('/api/v4/user', { 'private-token': expired.token })).json().error).toBe('invalid_token')
    const revoked = await createPersonalAccessToken(server.db, { username: 'alice', name: 'gone', scopes: ['api'] })
    await sql`update personal_access_tokens set revoked_at = now() where id = ${revoked.id}`.execute(server.db)
    expect((await get('/api/v4/user', { 'private-token': revoked.token })).statusCode).toBe(401)
  })
  it('a blocked account: 403', async () => {
    const { user } = await createUser(server.db, { username: 'mallory', password: 'long enough password' })
    const t = await tokenWith(['api'], user.id)
    await sql`update users set locked = true where id = ${user.id}`.execute(server.db)
    const res = await get('/api/v4/user', bearer(t))
    expect(res.statusCode).toBe(403)
    expect(res.json().message).toMatch(/blocked/)
  })
})

describe("scopes as GitLab's (RFC 6750 3.1 insufficient_scope) on every route, both ways", () => {
  // GitLab: api everywhere; read_api for GET (lib/api/api.rb); read_user for GET of the users API (lib/api/users.rb)
  const matrix: Array<[string, string, Record<string, number>, string]> = [
    ['GET', '/api/v4/user', { read_user: 200, read_api: 200, api: 200, openid: 403 }, 'api read_api read_user'],
    ['GET', '/api/v4/users/ID', { read_user: 200, read_api: 200, api: 200, openid: 403 }, 'api read_api read_user'],
    ['GET', '/api/v4/personal_access_tokens', { read_user: 403, read_api: 200, api: 200 }, 'api read_api'],
    ['PUT', '/api/v4/user', { read_user: 403, read_api: 403, api: 200 }, 'api'],
  ]
  for (const [method, path, expected, needed] of matrix) {
    for (const [scope, status] of Object.entries(expected)) {
      // twice: the token looked up, then as cached (answered without a promise where it can be)
      it(`${method} ${path} with ${scope}: ${status}, looked up and cached alike`, async () => {
        const token = await tokenWith([scope])
        const answers = []
        for (const _time of ['looked up', 'cached']) {
          const res = await server.app.inject({
            method: method as 'GET' | 'PUT',
            url: path.replace('ID', String(f.bob.id)),
            headers: bearer(token),
            ...(method === 'PUT' ? { payload: { bio: `bio via ${scope}` } } : {}),
          })
          expect(res.statusCode).toBe(status)
          if (status === 403) {
            expect(res.json()).toMatchObject({ error: 'insufficient_scope', scope: needed })
            expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"')
            expect(res.headers['www-authenticate']).toContain(`scope="${needed}"`)
          }
          // GitLab's exact type, errors included: python-gitlab compares it whole
          expect(res.headers['content-type']).toBe('application/json')
          answers.push(res.body)
        }
        expect(answers[1]).toBe(answers[0])
      })
    }
  }
  it('a personal access token is held to its scopes too', async () => {
    const { token } = await createPersonalAccessToken(server.db, {
      username: 'alice',
      name: 'ro',
      scopes: ['read_user'],
    })
    expect((await get('/api/v4/personal_access_tokens', { 'private-token': token })).statusCode).toBe(403)
  })
})

describe('/api/v4 payloads', () => {
  it('GET /user: the fields the service has; is_admin only for admins; no secrets', async () => {
    const body = (await get('/api/v4/user', bearer(await tokenWith(['read_user'])))).json()
    expect(body).toMatchObject({
      id: f.alice.id,
      username: 'alice',
      name: 'Alice',
      email: 'alice@example.org',
      state: 'active',
      locked: false,
      two_factor_enabled: false,
    })
    expect(body).not.toHaveProperty('is_admin')
    expect(JSON.stringify(body)).not.toMatch(/password|otp/)
    const { user } = await createUser(server.db, { username: 'root', password: 'long enough password', admin: true })
    expect((await get('/api/v4/user', bearer(await tokenWith(['read_user'], user.id)))).json().is_admin).toBe(true)
  })
  it('GET /users/:id: public fields only; unknown id 404 in GitLab shape', async () => {
    const body = (await get(`/api/v4/users/${f.bob.id}`, bearer(await tokenWith(['read_api'])))).json()
    expect(body.username).toBe('bob')
    expect(body).not.toHaveProperty('email')
    const missing = await get('/api/v4/users/999999', bearer(await tokenWith(['read_api'])))
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ message: '404 User Not Found' })
  })
  it('PUT /user updates the profile, and GET /user with the same (cached) token shows it at once', async () => {
    const token = await tokenWith(['api'])
    expect((await get('/api/v4/user', bearer(token))).json().job_title).not.toBe('Explorer')
    const res = await server.app.inject({
      method: 'PUT',
      url: '/api/v4/user',
      headers: bearer(token),
      payload: { name: 'Alice Liddell', job_title: 'Explorer' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ name: 'Alice Liddell', job_title: 'Explorer' })
    expect((await get('/api/v4/user', bearer(token))).json()).toMatchObject({
      name: 'Alice Liddell',
      job_title: 'Explorer',
    })
  })
  it("GET /personal_access_tokens lists the owner's tokens without their values", async () => {
    const { token } = await createPersonalAccessToken(server.db, {
      username: 'bob',
      name: 'listing',
      scopes: ['api'],
      expiresAt: '2099-12-31',
    })
    const body = (await get('/api/v4/personal_access_tokens', { 'private-token': token })).json()
    const entry = body.find((t: { name: string }) => t.name === 'listing')
    expect(entry).toMatchObject({
      active: true,
      revoked: false,
      scopes: ['api'],
      expires_at: '2099-12-31',
      user_id: f.bob.id,
    })
    expect(JSON.stringify(body)).not.toContain(token)
  })
})

// Doorkeeper's invalid_request, as GitLab's Oauth::TokenInfoController answers a missing or bad token
const INVALID_REQUEST = {
  error: 'invalid_request',
  error_description:
    'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.',
}

describe('GET /oauth/token/info (GitLab shape and errors)', () => {
  it('describes a token', async () => {
    const t = await tokenWith(['read_user', 'read_api'])
    const res = await get('/oauth/token/info', bearer(t))
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({
      resource_owner_id: f.alice.id,
      scope: ['read_user', 'read_api'],
      scopes: ['read_user', 'read_api'],
      application: { uid: f.web.uid },
    })
    expect(body.expires_in).toBeGreaterThan(7100)
    expect(body.expires_in_seconds).toBe(body.expires_in)
    expect((await get(`/oauth/token/info?access_token=${t}`)).statusCode).toBe(200)
  })
  it("GitLab's 400 invalid_request for a missing, unknown, expired or revoked token", async () => {
    const expired = await tokenWith(['openid'])
    await sql`update access_tokens set expires_at = now() - interval '1 second' where scopes = array['openid']`.execute(
      server.db,
    )
    const revoked = await tokenWith(['profile'])
    await sql`update access_tokens set revoked_at = now() where scopes = array['profile']`.execute(server.db)
    for (const headers of [{}, bearer('cmpa_nothing'), bearer(expired), bearer(revoked)]) {
      const res = await get('/oauth/token/info', headers)
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual(INVALID_REQUEST)
      expect(res.headers['cache-control']).toContain('no-store')
    }
  })
  it('a request with no token at all gets a challenge without an error code (RFC 6750 3.1)', async () => {
    const res = await get('/oauth/token/info')
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]+"$/)
    const bad = await get('/oauth/token/info', bearer('cmpa_nothing'))
    expect(bad.headers['www-authenticate']).toMatch(
      /^Bearer realm="[^"]+", error="invalid_request", error_description="/,
    )
  })
  it("a locked user's access token is not described, and his refresh token introspects inactive", async () => {
    const { user } = await createUser(server.db, { username: 'locked-out', password: 'long enough password' })
    const pair = await issueToken(server, { applicationId: f.web.id, userId: user.id, scopes: ['api'], refresh: true })
    await sql`update users set locked = true where id = ${user.id}`.execute(server.db)
    const info = await get('/oauth/token/info', bearer(pair.access_token))
    expect(info.statusCode).toBe(400)
    expect(info.json()).toEqual(INVALID_REQUEST)
    for (const token of [pair.access_token, pair.refresh_token as string]) {
      const introspection = await server.app.inject({
        method: 'POST',
        url: '/oauth/introspect',
        headers: {
          authorization: basic(f.web.uid, f.web.secret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams({ token }).toString(),
      })
      expect(introspection.json()).toEqual({ active: false })
    }
  })
})

describe('OpenID Connect Core 5.3 userinfo', () => {
  it('needs the openid scope; releases profile and email claims only for their scopes', async () => {
    const readUser = await tokenWith(['read_user'])
    const openid = await tokenWith(['openid'])
    // each token twice: looked up, then cached
    for (const _time of ['looked up', 'cached']) {
      const without = await get('/oauth/userinfo', bearer(readUser))
      expect(without.statusCode).toBe(403)
      expect(without.json()).toMatchObject({ error: 'insufficient_scope', scope: 'openid' })
      expect((await get('/oauth/userinfo', bearer(openid))).json()).toEqual({ sub: String(f.alice.id) })
    }
    const full = (await get('/oauth/userinfo', bearer(await tokenWith(['openid', 'email'])))).json()
    expect(full).toEqual({ sub: String(f.alice.id), email: 'alice@example.org', email_verified: true })
  })

  it('the JWKS publishes the signing key without its private part', async () => {
    const res = await get('/oauth/discovery/keys')
    const { keys } = res.json() as { keys: Array<Record<string, string>> }
    expect(keys.length).toBeGreaterThan(0)
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' })
    for (const key of keys) expect(key).not.toHaveProperty('d')
  })
})
