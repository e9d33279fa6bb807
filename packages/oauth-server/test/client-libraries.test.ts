/**
 * Third-party client libraries against a listening server, each used as its documentation says:
 * openid-client 6 (discovery, code + PKCE + nonce, id_token, userinfo, refresh, introspection,
 * revocation) and simple-oauth2 5 (authorization code, refresh, revocation, password grant).
 * The pages are driven with plain HTTP (cookie jar, CSRF token from the form).
 */
import * as openid from 'openid-client'
import { AuthorizationCode, ResourceOwnerPassword } from 'simple-oauth2'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication } from '../src/accounts.ts'
import { authorizeInBrowser, Browser, PASSWORD, seed, startServer, type TestServer } from './helpers.ts'

let server: TestServer
let fixtures: Awaited<ReturnType<typeof seed>>

beforeAll(async () => {
  server = await startServer()
  fixtures = await seed(server.db, server.settings.secretKey)
})
afterAll(async () => {
  await server?.close()
})

const alice = { username: 'alice', password: PASSWORD }

async function userApi(accessToken: string): Promise<{ status: number; username?: string }> {
  const response = await fetch(`${server.url}/api/v4/user`, { headers: { authorization: `Bearer ${accessToken}` } })
  return { status: response.status, ...(response.ok ? ((await response.json()) as { username: string }) : {}) }
}

/** A confidential application of its own, so consent and tokens of one test do not meet another's. */
async function confidentialApp(name: string, redirectUri: string) {
  const { application, secret } = await createApplication(server.db, {
    name,
    redirectUris: [redirectUri],
    scopes: ['api', 'read_user', 'openid', 'profile', 'email'],
  })
  return { clientId: application.uid, secret: secret as string }
}

describe('openid-client 6', () => {
  it('discovery, code flow with PKCE and nonce, id_token, userinfo, refresh, introspection, revocation', async () => {
    const redirectUri = 'https://oidc-client.example/cb'
    const app = await confidentialApp('openid-client app', redirectUri)
    const config = await openid.discovery(new URL(server.url), app.clientId, app.secret, undefined, {
      execute: [openid.allowInsecureRequests],
    })
    expect(config.serverMetadata().issuer).toBe(server.url)

    const verifier = openid.randomPKCECodeVerifier()
    const state = openid.randomState()
    const nonce = openid.randomNonce()
    const url = openid.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile email read_user',
      code_challenge: await openid.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    })
    const location = await authorizeInBrowser(new Browser(server.url), url.href, alice)
    const tokens = await openid.authorizationCodeGrant(config, new URL(location), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    })
    const claims = tokens.claims()
    expect(claims).toMatchObject({ iss: server.url, aud: app.clientId, sub: String(fixtures.alice.id), nonce })
    expect(tokens.token_type.toLowerCase()).toBe('bearer')
    expect(await userApi(tokens.access_token)).toMatchObject({ status: 200, username: 'alice' })

    const info = await openid.fetchUserInfo(config, tokens.access_token, String(fixtures.alice.id))
    expect(info).toMatchObject({ email: 'alice@example.org', preferred_username: 'alice' })

    const refreshed = await openid.refreshTokenGrant(config, tokens.refresh_token as string)
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    expect(await userApi(tokens.access_token)).toMatchObject({ status: 401 })
    expect(await userApi(refreshed.access_token)).toMatchObject({ status: 200 })

    const active = await openid.tokenIntrospection(config, refreshed.access_token)
    expect(active).toMatchObject({ active: true, client_id: app.clientId, username: 'alice', token_type: 'Bearer' })
    await openid.tokenRevocation(config, refreshed.refresh_token as string, { token_type_hint: 'refresh_token' })
    expect(await userApi(refreshed.access_token)).toMatchObject({ status: 401 })
    expect((await openid.tokenIntrospection(config, refreshed.access_token)).active).toBe(false)
  })
})

describe('simple-oauth2 5', () => {
  const auth = (clientId: string, secret: string) => ({
    client: { id: clientId, secret },
    auth: {
      tokenHost: server.url,
      tokenPath: '/oauth/token',
      authorizePath: '/oauth/authorize',
      revokePath: '/oauth/revoke',
    },
  })
  const tokenOnly = (clientId: string, secret: string) => ({
    client: { id: clientId, secret },
    auth: { tokenHost: server.url, tokenPath: '/oauth/token', revokePath: '/oauth/revoke' },
  })

  it('authorization code (client secret in the Basic header), refresh and revocation', async () => {
    const redirectUri = 'https://simple-oauth2.example/cb'
    const app = await confidentialApp('simple-oauth2 app', redirectUri)
    const client = new AuthorizationCode(auth(app.clientId, app.secret))
    const state = 'simple-oauth2-state'
    const url = client.authorizeURL({ redirect_uri: redirectUri, scope: 'read_user api', state })
    const location = new URL(await authorizeInBrowser(new Browser(server.url), url, alice))
    expect(location.searchParams.get('state')).toBe(state)
    expect(location.searchParams.get('iss')).toBe(server.url)

    const token = await client.getToken({
      code: location.searchParams.get('code') as string,
      redirect_uri: redirectUri,
      scope: 'read_user api',
    })
    expect(token.token).toMatchObject({ token_type: 'Bearer', expires_in: 7200, scope: 'read_user api' })
    expect(token.expired()).toBe(false)
    const first = token.token.access_token as string
    expect(await userApi(first)).toMatchObject({ status: 200, username: 'alice' })

    const refreshed = await token.refresh()
    const second = refreshed.token.access_token as string
    expect(second).not.toBe(first)
    expect(await userApi(first)).toMatchObject({ status: 401 })
    expect(await userApi(second)).toMatchObject({ status: 200 })

    await refreshed.revokeAll()
    expect(await userApi(second)).toMatchObject({ status: 401 })
  })

  it('the same with the client secret in the body', async () => {
    const redirectUri = 'https://simple-oauth2-body.example/cb'
    const app = await confidentialApp('simple-oauth2 body app', redirectUri)
    const client = new AuthorizationCode({
      ...auth(app.clientId, app.secret),
      options: { authorizationMethod: 'body' },
    })
    const url = client.authorizeURL({ redirect_uri: redirectUri, scope: 'read_user', state: 'body-state' })
    const location = new URL(await authorizeInBrowser(new Browser(server.url), url, alice))
    const token = await client.getToken({
      code: location.searchParams.get('code') as string,
      redirect_uri: redirectUri,
    })
    expect(await userApi(token.token.access_token as string)).toMatchObject({ status: 200, username: 'alice' })
  })

  it('password grant: a token without a refresh token; a wrong password is refused with invalid_grant', async () => {
    const client = new ResourceOwnerPassword(tokenOnly(fixtures.web.uid, fixtures.web.secret))
    const token = await client.getToken({ username: 'alice', password: PASSWORD, scope: 'read_user' })
    expect(token.token.refresh_token).toBeUndefined()
    expect(await userApi(token.token.access_token as string)).toMatchObject({ status: 200, username: 'alice' })
    // simple-oauth2 rejects with a Boom error carrying the status and the server's body
    const refused = await client.getToken({ username: 'alice', password: 'not the password', scope: 'read_user' }).then(
      () => undefined,
      (error: { output: { statusCode: number }; data: { payload: unknown } }) => ({
        status: error.output.statusCode,
        body: error.data.payload,
      }),
    )
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
  })
})
