import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import { changeMechanism } from '../src/changes/commit.ts'
import { defaultSettings } from '../src/config.ts'
import { digest } from '../src/domain/secrets.ts'
import { upsertResourceServer } from '../src/repositories/applications.ts'
import { basic, exchangeCode, issueCode, PASSWORD, postForm, seed, startServer, type TestServer } from './helpers.ts'

let server: TestServer
let f: Awaited<ReturnType<typeof seed>>

beforeAll(async () => {
  server = await startServer()
  f = await seed(server.db, server.settings.secretKey)
})
afterAll(async () => {
  await server?.close()
})

async function tokensFor(client = f.web) {
  const code = await issueCode(server, {
    client,
    userId: f.alice.id,
    redirectUri: client.redirect_uris[0] as string,
    scopes: ['read_user'],
  })
  const res = await exchangeCode(server.url, code, client.redirect_uris[0] as string, {
    authorization: basic(client.uid, client.secret),
  })
  expect(res.status).toBe(200)
  return res.body as { access_token: string; refresh_token: string }
}
const apiStatus = async (t: string) =>
  (await fetch(`${server.url}/api/v4/user`, { headers: { authorization: `Bearer ${t}` } })).status
const webAuth = () => ({ authorization: basic(f.web.uid, f.web.secret) })

describe('RFC 7009 token revocation', () => {
  it('2.2: revoking an access token answers 200 {} and the token stops working', async () => {
    const t = await tokensFor()
    // in use (and cached) before the revocation: the revocation still takes effect at once
    expect(await apiStatus(t.access_token)).toBe(200)
    const res = await postForm(server.url, '/oauth/revoke', { token: t.access_token }, webAuth())
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})
    expect(await apiStatus(t.access_token)).toBe(401)
  })
  it('2.1: revoking a refresh token revokes its whole grant', async () => {
    const t = await tokensFor()
    expect(await apiStatus(t.access_token)).toBe(200)
    const res = await postForm(
      server.url,
      '/oauth/revoke',
      { token: t.refresh_token, token_type_hint: 'refresh_token' },
      webAuth(),
    )
    expect(res.status).toBe(200)
    expect(await apiStatus(t.access_token)).toBe(401)
    const refresh = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: t.refresh_token },
      webAuth(),
    )
    expect(refresh.body.error).toBe('invalid_grant')
  })
  it('2.2: an unknown token also answers 200 {}', async () => {
    const res = await postForm(server.url, '/oauth/revoke', { token: 'cmpa_never_issued' }, webAuth())
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})
  })
  it('2.1: a token of another client is refused (403 unauthorized_client, as Doorkeeper) and stays valid', async () => {
    const t = await tokensFor()
    const res = await postForm(
      server.url,
      '/oauth/revoke',
      { token: t.access_token },
      { authorization: basic(f.other.uid, f.other.secret) },
    )
    expect(res.status).toBe(403)
    expect(res.body.error).toBe('unauthorized_client')
    expect(await apiStatus(t.access_token)).toBe(200)
  })
  it('a token issued without a client is revoked by presenting it, with or without a client (as Doorkeeper)', async () => {
    for (const headers of [{}, webAuth()]) {
      const grant = await postForm(server.url, '/oauth/token', {
        grant_type: 'password',
        username: 'alice',
        password: PASSWORD,
        scope: 'read_user',
      })
      expect(await apiStatus(grant.body.access_token as string)).toBe(200)
      const res = await postForm(server.url, '/oauth/revoke', { token: grant.body.access_token as string }, headers)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({})
      expect(await apiStatus(grant.body.access_token as string)).toBe(401)
    }
  })
  it('2.2.1: invalid_client without client authentication; invalid_request without token', async () => {
    const t = await tokensFor()
    const anonymous = await postForm(server.url, '/oauth/revoke', { token: t.access_token })
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.error).toBe('invalid_client')
    const missing = await postForm(server.url, '/oauth/revoke', {}, webAuth())
    expect(missing.status).toBe(400)
    expect(missing.body.error).toBe('invalid_request')
  })
})

describe('RFC 7662 token introspection', () => {
  it('2.2: an active access token with scope, client_id, username, token_type, exp, iat, sub, iss', async () => {
    const t = await tokensFor()
    const res = await postForm(server.url, '/oauth/introspect', { token: t.access_token }, webAuth())
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      active: true,
      scope: 'read_user',
      client_id: f.web.uid,
      username: 'alice',
      token_type: 'Bearer',
      sub: String(f.alice.id),
      iss: server.url,
    })
    expect((res.body.exp as number) - (res.body.iat as number)).toBe(7200)
    expect(res.headers.get('cache-control')).toBe('no-store')
  })
  it('2.2: a refresh token is active until rotated', async () => {
    const t = await tokensFor()
    const res = await postForm(
      server.url,
      '/oauth/introspect',
      { token: t.refresh_token, token_type_hint: 'refresh_token' },
      webAuth(),
    )
    expect(res.body).toMatchObject({ active: true, scope: 'read_user', client_id: f.web.uid })
    // RFC 7662 2.2: token_type is an access token's type (RFC 6749 5.1); a refresh token has none
    // and no expiry of its own (Doorkeeper's introspection leaves both out too)
    expect(res.body).not.toHaveProperty('token_type')
    expect(res.body).not.toHaveProperty('exp')
    await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: t.refresh_token },
      webAuth(),
    )
    const after = await postForm(server.url, '/oauth/introspect', { token: t.refresh_token }, webAuth())
    expect(after.body).toEqual({ active: false })
  })
  it('2.2: revoked, unknown, or another client\'s token: {"active": false} only', async () => {
    const t = await tokensFor()
    const other = await postForm(
      server.url,
      '/oauth/introspect',
      { token: t.access_token },
      { authorization: basic(f.other.uid, f.other.secret) },
    )
    expect(other.body).toEqual({ active: false })
    await postForm(server.url, '/oauth/revoke', { token: t.access_token }, webAuth())
    expect((await postForm(server.url, '/oauth/introspect', { token: t.access_token }, webAuth())).body).toEqual({
      active: false,
    })
    expect((await postForm(server.url, '/oauth/introspect', { token: 'cmpa_x' }, webAuth())).body).toEqual({
      active: false,
    })
  })
  it("2.1: a resource server introspects every client's access tokens, not their refresh tokens", async () => {
    const secret = 'resource-server-secret-of-at-least-32-characters'
    const changes = changeMechanism(server.db, { cacheSeconds: 0, notify: false })
    await changes.commit((trx) =>
      upsertResourceServer(trx, { uid: 'energy-data', name: 'Energy data API', secretDigest: digest(secret) }),
    )
    const t = await tokensFor()
    const asked = (token: string) =>
      postForm(server.url, '/oauth/introspect', { token }, { authorization: basic('energy-data', secret) })
    expect((await asked(t.access_token)).body).toMatchObject({
      active: true,
      scope: 'read_user',
      client_id: f.web.uid,
      username: 'alice',
      sub: String(f.alice.id),
    })
    expect((await asked(t.refresh_token)).body).toEqual({ active: false })
    // only an instance-wide confidential application can be one (a database constraint)
    await expect(
      sql`update applications set resource_server = true where uid = ${f.spa.uid}`.execute(server.db),
    ).rejects.toThrow(/applications_resource_server_instance_wide/)
  })
  it('2.1: only confidential clients may introspect (401 invalid_client)', async () => {
    const t = await tokensFor()
    const pub = await postForm(server.url, '/oauth/introspect', { token: t.access_token, client_id: f.spa.uid })
    expect(pub.status).toBe(401)
    expect(pub.body.error).toBe('invalid_client')
    const none = await postForm(server.url, '/oauth/introspect', { token: t.access_token })
    expect(none.status).toBe(401)
  })
})

describe('RFC 8414 authorization server metadata', () => {
  it('lists exactly what is supported', async () => {
    const res = await fetch(`${server.url}/.well-known/oauth-authorization-server`)
    const body = await res.json()
    expect(body).toEqual({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      introspection_endpoint: `${server.url}/oauth/introspect`,
      device_authorization_endpoint: `${server.url}/oauth/authorize_device`,
      pushed_authorization_request_endpoint: `${server.url}/oauth/par`,
      require_pushed_authorization_requests: false,
      jwks_uri: `${server.url}/oauth/discovery/keys`,
      scopes_supported: [
        'api',
        'read_api',
        'read_user',
        'openid',
        'profile',
        'email',
        'read_energy',
        'write_energy',
        'manage_energy',
      ],
      response_types_supported: ['code', 'token'],
      response_modes_supported: ['query', 'fragment'],
      grant_types_supported: [
        'authorization_code',
        'password',
        'refresh_token',
        'client_credentials',
        'urn:ietf:params:oauth:grant-type:device_code',
        'implicit',
      ],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      dpop_signing_alg_values_supported: [
        'ES256',
        'ES384',
        'ES512',
        'PS256',
        'PS384',
        'PS512',
        'RS256',
        'RS384',
        'RS512',
        'EdDSA',
      ],
      service_documentation: `${server.url}/docs`,
    })
  })
  it('drops the legacy grants when they are switched off', async () => {
    const app = await buildApp({
      database: server.database,
      settings: defaultSettings({ implicitGrant: false, passwordGrant: false }),
    })
    const body = (await app.inject('/.well-known/oauth-authorization-server')).json()
    await app.close()
    expect(body.response_types_supported).toEqual(['code'])
    expect(body.grant_types_supported).toEqual([
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:device_code',
    ])
  })
  it('the OpenAPI document is generated and lists the endpoints', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> }
    for (const path of [
      '/oauth/token',
      '/oauth/authorize',
      '/oauth/revoke',
      '/oauth/introspect',
      '/oauth/token/info',
      '/api/v4/user',
      '/api/v4/users/{id}',
    ]) {
      expect(doc.paths).toHaveProperty([path])
    }
  })
})

describe('a body the endpoints cannot read', () => {
  it('answers 415 naming the types the route takes, whether the type is wrong or missing', async () => {
    const post = (url: string, headers: Record<string, string>) =>
      server.app.inject({ method: 'POST', url, headers, payload: 'grant_type=password' })
    const missing = await post('/oauth/token', {})
    expect(missing.statusCode).toBe(415)
    expect(missing.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Unsupported Media Type: the body has no Content-Type; send application/x-www-form-urlencoded',
    })
    const text = await post('/oauth/token', { 'content-type': 'text/plain' })
    expect([text.statusCode, text.json().error_description]).toEqual([
      415,
      'Unsupported Media Type: text/plain is not taken; send application/x-www-form-urlencoded',
    ])
    const wrong = await post('/oauth/token', { 'content-type': 'application/xml' })
    expect(wrong.statusCode).toBe(415)
    expect(wrong.json().error_description).toBe(
      'Unsupported Media Type: application/xml is not taken; send application/x-www-form-urlencoded',
    )
    // the type named is taken: the answer is the grant's own, not a refusal of the body
    const named = await post('/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' })
    expect(named.json().error_description).not.toMatch(/Media Type|must be application/)
    // client registration takes JSON metadata (RFC 7591 3.1), and names it
    const register = await post('/oauth/register', { 'content-type': 'application/xml' })
    expect([register.statusCode, register.json().error_description]).toEqual([
      415,
      'Unsupported Media Type: application/xml is not taken; send application/json',
    ])
  })
})
