/**
 * RFC 6749 flows end to end through oauth4webapi (a strict client) against a listening server:
 * 4.1 authorization code (with PKCE RFC 7636 and without), 4.2 implicit, 4.3 password, 6 refresh.
 * The pages are driven with plain HTTP (cookie jar, CSRF token from the form); each resulting
 * token calls /api/v4/user. Afterwards, a dump of every table holds none of the secrets handled.
 */

import { sql } from 'kysely'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authorizeInBrowser, Browser, PASSWORD, seed, startServer, type TestServer } from './helpers.ts'

const insecure = { [oauth.allowInsecureRequests]: true }

describe('OAuth 2.0 flows through oauth4webapi', () => {
  let server: TestServer
  let fixtures: Awaited<ReturnType<typeof seed>>
  let as: oauth.AuthorizationServer
  /** every secret value this test saw: none may appear in the database */
  const handled = new Set<string>()

  const remember = (...values: Array<string | undefined>) => {
    for (const v of values) if (v) handled.add(v)
  }

  async function callUserApi(accessToken: string) {
    const response = await oauth.protectedResourceRequest(
      accessToken,
      'GET',
      new URL(`${server.url}/api/v4/user`),
      new Headers(),
      null,
      insecure,
    )
    expect(response.status).toBe(200)
    return (await response.json()) as { username: string }
  }

  function authorizationUrl(params: Record<string, string>): string {
    const url = new URL(as.authorization_endpoint as string)
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
    return url.toString()
  }

  function trackBrowser(browser: Browser) {
    for (const value of browser.cookies.values()) remember(value)
  }

  beforeAll(async () => {
    server = await startServer()
    fixtures = await seed(server.db, server.settings.secretKey)
    remember(PASSWORD, fixtures.web.secret, fixtures.other.secret, fixtures.bob.otpSecret)
    const issuer = new URL(server.url)
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    )
  })

  afterAll(async () => {
    await server?.close()
  })

  it('RFC 8414: metadata is accepted by the client and names the issuer', () => {
    expect(as.issuer).toBe(server.url)
    expect(as.authorization_response_iss_parameter_supported).toBe(true)
    expect(as.code_challenge_methods_supported).toEqual(['S256'])
  })

  it('RFC 6749 4.1 + RFC 7636: authorization code with PKCE for a public client, then refresh (6)', async () => {
    const client: oauth.Client = { client_id: fixtures.spa.uid }
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const browser = new Browser(server.url)
    const location = await authorizeInBrowser(
      browser,
      authorizationUrl({
        client_id: client.client_id,
        redirect_uri: 'https://spa.example/cb',
        response_type: 'code',
        scope: 'read_user',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }),
      { username: 'alice', password: PASSWORD },
    )
    trackBrowser(browser)
    const params = oauth.validateAuthResponse(as, client, new URL(location), state)
    remember(params.get('code') ?? undefined, verifier)
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      'https://spa.example/cb',
      verifier,
      insecure,
    )
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response)
    remember(tokens.access_token, tokens.refresh_token)
    expect(tokens.token_type).toBe('bearer')
    expect(tokens.expires_in).toBe(7200)
    expect(tokens.scope).toBe('read_user')
    expect(tokens.refresh_token).toMatch(/^cmpr_/)
    expect((await callUserApi(tokens.access_token)).username).toBe('alice')

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token as string, insecure),
    )
    remember(refreshed.access_token, refreshed.refresh_token)
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect((await callUserApi(refreshed.access_token)).username).toBe('alice')
    // the old access token ended with the rotation
    const old = await fetch(`${server.url}/api/v4/user`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    expect(old.status).toBe(401)
  })

  it('RFC 6749 4.1: authorization code without PKCE for a confidential client (HTTP Basic), 2FA sign-in', async () => {
    const client: oauth.Client = { client_id: fixtures.web.uid }
    const state = oauth.generateRandomState()
    const browser = new Browser(server.url)
    const location = await authorizeInBrowser(
      browser,
      authorizationUrl({
        client_id: client.client_id,
        redirect_uri: 'https://client.example/cb',
        response_type: 'code',
        scope: 'api read_user',
        state,
      }),
      { username: 'bob', password: PASSWORD, otpSecret: fixtures.bob.otpSecret },
    )
    trackBrowser(browser)
    const params = oauth.validateAuthResponse(as, client, new URL(location), state)
    remember(params.get('code') ?? undefined)
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(fixtures.web.secret),
        params,
        'https://client.example/cb',
        oauth.nopkce,
        insecure,
      ),
    )
    remember(tokens.access_token, tokens.refresh_token)
    expect(tokens.scope).toBe('api read_user')
    expect((await callUserApi(tokens.access_token)).username).toBe('bob')

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(
        as,
        client,
        oauth.ClientSecretPost(fixtures.web.secret),
        tokens.refresh_token as string,
        insecure,
      ),
    )
    remember(refreshed.access_token, refreshed.refresh_token)
    expect((await callUserApi(refreshed.access_token)).username).toBe('bob')
  })

  it('RFC 6749 4.2: implicit grant returns the token in the fragment with state and iss', async () => {
    const client: oauth.Client = { client_id: fixtures.web.uid }
    const state = oauth.generateRandomState()
    const browser = new Browser(server.url)
    const location = await authorizeInBrowser(
      browser,
      authorizationUrl({
        client_id: client.client_id,
        redirect_uri: 'https://client.example/cb',
        response_type: 'token',
        scope: 'read_user',
        state,
      }),
      { username: 'alice', password: PASSWORD },
    )
    trackBrowser(browser)
    const url = new URL(location)
    expect(url.search).toBe('')
    const fragment = new URLSearchParams(url.hash.slice(1))
    const params = oauth.validateAuthResponse(as, client, fragment, state)
    const accessToken = params.get('access_token') as string
    remember(accessToken)
    expect(params.get('token_type')).toBe('Bearer')
    expect(params.get('expires_in')).toBe('7200')
    expect(params.get('scope')).toBe('read_user')
    expect(params.has('refresh_token')).toBe(false)
    expect((await callUserApi(accessToken)).username).toBe('alice')
  })

  it('RFC 6749 4.3: password grant (client authentication in the body), no refresh token', async () => {
    const client: oauth.Client = { client_id: fixtures.web.uid }
    const response = await oauth.genericTokenEndpointRequest(
      as,
      client,
      oauth.ClientSecretPost(fixtures.web.secret),
      'password',
      { username: 'alice', password: PASSWORD, scope: 'read_user' },
      insecure,
    )
    const tokens = await oauth.processGenericTokenEndpointResponse(as, client, response)
    remember(tokens.access_token)
    expect(tokens.refresh_token).toBeUndefined()
    expect(tokens.scope).toBe('read_user')
    expect((await callUserApi(tokens.access_token)).username).toBe('alice')
  })

  it('RFC 6749 4.3: password grant without client authentication, as GitLab allows', async () => {
    const client: oauth.Client = { client_id: 'no-client' }
    const response = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: 'alice', password: PASSWORD }),
    })
    const tokens = await oauth.processGenericTokenEndpointResponse(as, client, response)
    remember(tokens.access_token)
    expect(tokens.scope).toBe('api')
    expect((await callUserApi(tokens.access_token)).username).toBe('alice')
  })

  it('OpenID Connect Core 3.1: code flow with openid returns a signed id_token; userinfo answers', async () => {
    const issuer = new URL(server.url)
    const oidc = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }),
    )
    const client: oauth.Client = { client_id: fixtures.web.uid }
    const state = oauth.generateRandomState()
    const nonce = oauth.generateRandomNonce()
    const verifier = oauth.generateRandomCodeVerifier()
    const url = new URL(oidc.authorization_endpoint as string)
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: 'https://client.example/cb',
      response_type: 'code',
      scope: 'openid profile email',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()
    const browser = new Browser(server.url)
    const location = await authorizeInBrowser(browser, url.toString(), { username: 'alice', password: PASSWORD })
    trackBrowser(browser)
    const params = oauth.validateAuthResponse(oidc, client, new URL(location), state)
    remember(params.get('code') ?? undefined)
    const tokens = await oauth.processAuthorizationCodeResponse(
      oidc,
      client,
      await oauth.authorizationCodeGrantRequest(
        oidc,
        client,
        oauth.ClientSecretBasic(fixtures.web.secret),
        params,
        'https://client.example/cb',
        verifier,
        insecure,
      ),
      { expectedNonce: nonce, requireIdToken: true },
    )
    remember(tokens.access_token, tokens.refresh_token, tokens.id_token)
    const claims = oauth.getValidatedIdTokenClaims(tokens) as oauth.IDToken & Record<string, unknown>
    expect(claims).toMatchObject({ iss: server.url, sub: String(fixtures.alice.id), aud: fixtures.web.uid, nonce })
    expect(claims.email).toBe('alice@example.org')
    expect(claims.preferred_username).toBe('alice')
    expect(typeof claims.auth_time).toBe('number')
    // the signature checks out against the published keys
    const { createRemoteJWKSet, jwtVerify } = await import('jose')
    const verified = await jwtVerify(tokens.id_token as string, createRemoteJWKSet(new URL(oidc.jwks_uri as string)), {
      issuer: server.url,
      audience: fixtures.web.uid,
    })
    expect(verified.protectedHeader.alg).toBe('RS256')

    const info = await oauth.processUserInfoResponse(
      oidc,
      client,
      String(fixtures.alice.id),
      await oauth.userInfoRequest(oidc, client, tokens.access_token, insecure),
    )
    expect(info).toMatchObject({ sub: String(fixtures.alice.id), name: 'Alice', email: 'alice@example.org' })
  })

  it('a dump of every table after the flows holds no token, code, secret, TOTP seed, password or session id', async () => {
    expect(handled.size).toBeGreaterThan(15)
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables
      where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(server.db)
    expect(tables.rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['users', 'sessions', 'applications', 'authorization_codes', 'access_tokens']),
    )
    let dump = ''
    for (const { table_name } of tables.rows) {
      const rows = await sql<{ row: string }>`select t::text as row from ${sql.table(table_name)} t`.execute(server.db)
      dump += rows.rows.map((r) => r.row).join('\n')
    }
    expect(dump).toContain('alice')
    expect(dump.length).toBeGreaterThan(1000)
    for (const secret of handled) {
      expect(dump.includes(secret), `dump contains a handled secret (${secret.slice(0, 5)}...)`).toBe(false)
    }
  })
})
