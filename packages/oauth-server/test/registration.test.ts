/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592): off by default; open to
 * public clients within the applications page's rules, rate limited, never a powerful scope; with
 * an initial access token, once per use. oauth4webapi registers and then runs the code flow as
 * the client it became.
 */
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { digest, generateSecret } from '../src/domain/secrets.ts'
import { insertInitialAccessToken } from '../src/repositories/registrations.ts'
import { authorizeInBrowser, Browser, PASSWORD, seed, startServer, type TestServer } from './helpers.ts'

let server: TestServer
const options = { [oauth.allowInsecureRequests]: true }
const REDIRECT = 'http://127.0.0.1/callback'

beforeAll(async () => {
  server = await startServer({ registration: 'open' })
  await seed(server.db, server.settings.secretKey)
})
afterAll(async () => server?.close())

async function discover(): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.url)
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options))
}

async function register(metadata: Record<string, unknown>, token?: string) {
  const response = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(metadata),
  })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  }
}

async function initialAccessToken(uses: number): Promise<string> {
  const token = generateSecret('initialAccessToken')
  await insertInitialAccessToken(server.db, {
    digest: digest(token),
    name: 'test',
    uses,
    expiresAt: new Date(Date.now() + 60_000),
  })
  return token
}

describe('dynamic client registration (RFC 7591)', () => {
  it('off by default: no registration_endpoint in the metadata, 404 at /oauth/register', async () => {
    const off = await startServer()
    try {
      const metadata = (await (await fetch(`${off.url}/.well-known/oauth-authorization-server`)).json()) as object
      expect(metadata).not.toHaveProperty('registration_endpoint')
      const response = await fetch(`${off.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      })
      expect([response.status, await response.json()]).toEqual([404, { message: '404 Not Found' }])
    } finally {
      await off.close()
    }
  })

  it('oauth4webapi registers a public client in the open mode, then signs a user in as it (code + PKCE)', async () => {
    const as = await discover()
    expect(as.registration_endpoint).toBe(`${server.url}/oauth/register`)
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: 'An agent',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        scope: 'read_user',
      },
      options,
    )
    const client = await oauth.processDynamicClientRegistrationResponse(response)
    expect(client).toMatchObject({
      client_name: 'An agent',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'read_user',
      registration_client_uri: `${server.url}/oauth/register/${client.client_id}`,
    })
    expect(client.client_secret).toBeUndefined()
    expect(client.registration_access_token).toMatch(/^cmpg_/)

    const verifier = oauth.generateRandomCodeVerifier()
    const url = new URL(as.authorization_endpoint as string)
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'read_user',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()
    const location = await authorizeInBrowser(new Browser(server.url), url.href, {
      username: 'alice',
      password: PASSWORD,
    })
    const params = oauth.validateAuthResponse(as, client, new URL(location))
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, options),
    )
    const user = await fetch(`${server.url}/api/v4/user`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    expect(user.status).toBe(200)
  })

  it('an open registration is refused what it may not have: a secret, a powerful scope, a legacy grant, a redirect URI off the rules, an instance application\u2019s name', async () => {
    const refusals: Array<[Record<string, unknown>, string, string]> = [
      [
        { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' },
        'invalid_client_metadata',
        'an open registration makes public clients only: token_endpoint_auth_method must be none',
      ],
      [
        { redirect_uris: [REDIRECT], scope: 'read_user api' },
        'invalid_client_metadata',
        'the scope api needs a registration with an initial access token',
      ],
      [
        { redirect_uris: [REDIRECT], scope: 'write_energy' },
        'invalid_client_metadata',
        'the scope write_energy needs a registration with an initial access token',
      ],
      [
        { redirect_uris: [REDIRECT], grant_types: ['implicit'] },
        'invalid_client_metadata',
        'the grant type implicit is not offered to registered clients',
      ],
      [
        { redirect_uris: [REDIRECT], grant_types: ['password'] },
        'invalid_client_metadata',
        'the grant type password is not offered to registered clients',
      ],
      [
        { redirect_uris: ['http://evil.example/cb'] },
        'invalid_redirect_uri',
        'redirect URI http://evil.example/cb must use https (plain http only for loopback)',
      ],
      [
        { redirect_uris: ['javascript:alert(1)'] },
        'invalid_redirect_uri',
        'redirect URI javascript:alert(1) uses the forbidden scheme javascript:',
      ],
      [{}, 'invalid_redirect_uri', 'redirect_uris is required for authorization_code'],
      [{ redirect_uris: { first: REDIRECT } }, 'invalid_client_metadata', 'body/redirect_uris must be array'],
      [
        { redirect_uris: [REDIRECT], client_name: 'web app' },
        'invalid_client_metadata',
        'client_name is taken by an application of this instance',
      ],
    ]
    for (const [metadata, error, description] of refusals) {
      expect(await register(metadata)).toMatchObject({ status: 400, body: { error, error_description: description } })
    }
  })

  it('an open registration holds no powerful scope by default, and is no application of the instance: its errors are shown, not redirected', async () => {
    const { body } = await register({ redirect_uris: [REDIRECT] })
    expect(String(body.scope).split(' ')).toEqual([
      'read_api',
      'read_user',
      'openid',
      'profile',
      'email',
      'read_energy',
    ])
    const page = await new Browser(server.url).request(
      `/oauth/authorize?${new URLSearchParams({ client_id: String(body.client_id), redirect_uri: REDIRECT, response_type: 'code', scope: 'read_user' })}`,
    )
    // a public client without PKCE: an error of a client nobody vouches for stays on this server
    expect(page.status).toBe(400)
    expect(await page.text()).toContain('PKCE is required for public clients')
  })

  it('open registrations are rate limited per address: 429 temporarily_unavailable with Retry-After', async () => {
    const limited = await startServer({
      registration: 'open',
      throttle: { ...server.settings.throttle, registrationLimit: 2 },
    })
    try {
      const post = () =>
        fetch(`${limited.url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ redirect_uris: [REDIRECT] }),
        })
      expect((await post()).status).toBe(201)
      expect((await post()).status).toBe(201)
      const third = await post()
      expect(third.status).toBe(429)
      expect(((await third.json()) as { error: string }).error).toBe('temporarily_unavailable')
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0)
    } finally {
      await limited.close()
    }
  })

  it('an initial access token registers a confidential client with any scope, as many times as it has uses; in the token mode nothing registers without one', async () => {
    const token = await initialAccessToken(1)
    const created = await register(
      { redirect_uris: ['https://app.example/cb'], scope: 'api', client_name: 'Backend' },
      token,
    )
    expect(created).toMatchObject({
      status: 201,
      body: { token_endpoint_auth_method: 'client_secret_basic', scope: 'api', client_secret_expires_at: 0 },
    })
    expect(created.body.client_secret).toMatch(/^cmps_/)
    expect(await register({ redirect_uris: ['https://app.example/cb'] }, token)).toMatchObject({
      status: 401,
      body: { error: 'invalid_token', error_description: 'The initial access token is invalid, expired or used up.' },
    })
    server.settings.registration = 'token'
    try {
      const none = await register({ redirect_uris: [REDIRECT] })
      expect(none).toMatchObject({
        status: 401,
        body: {
          error: 'invalid_token',
          error_description: 'An initial access token is required to register a client.',
        },
      })
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+", error="invalid_token"/)
    } finally {
      server.settings.registration = 'open'
    }
  })
})

describe('client registration management (RFC 7592)', () => {
  it('the registration access token reads, replaces and deletes its client, and nothing else', async () => {
    const { body } = await register({ redirect_uris: [REDIRECT], client_name: 'Managed', scope: 'read_user' })
    const uri = String(body.registration_client_uri)
    const token = String(body.registration_access_token)
    const call = async (method: string, auth: string, json?: object) => {
      const response = await fetch(uri, {
        method,
        headers: { authorization: `Bearer ${auth}`, ...(json ? { 'content-type': 'application/json' } : {}) },
        ...(json ? { body: JSON.stringify(json) } : {}),
      })
      return { status: response.status, body: response.status === 204 ? undefined : await response.json() }
    }
    expect(await call('GET', token)).toMatchObject({
      status: 200,
      body: { client_id: body.client_id, client_name: 'Managed' },
    })
    expect(await call('GET', 'cmpg_wrong')).toMatchObject({ status: 401, body: { error: 'invalid_token' } })
    const replaced = await call('PUT', token, {
      client_id: body.client_id,
      redirect_uris: ['http://127.0.0.1/other'],
      client_name: 'Managed again',
      scope: 'read_user openid',
    })
    expect(replaced).toMatchObject({
      status: 200,
      body: { redirect_uris: ['http://127.0.0.1/other'], client_name: 'Managed again', scope: 'read_user openid' },
    })
    expect(
      await call('PUT', token, { client_id: body.client_id, redirect_uris: [REDIRECT], scope: 'api' }),
    ).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_client_metadata',
        error_description: 'the scope api needs a registration with an initial access token',
      },
    })
    expect(await call('DELETE', token)).toEqual({ status: 204, body: undefined })
    expect((await call('GET', token)).status).toBe(401)
  })
})
