/**
 * DPoP (RFC 9449): tokens bound to the client's key at the token endpoint, and taken by the
 * resources (`/api/v4`, userinfo, token info) only with a proof of that key. oauth4webapi drives
 * the flows as its documentation says; the refused proofs are made by hand with jose, one fault
 * each, and each answer is checked against the RFC's error codes and challenge.
 */
import { needsService } from '@campus/shared/testing'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import {
  authorizeInBrowser,
  Browser,
  basic,
  PASSWORD,
  postForm,
  seed,
  startServer,
  type TestServer,
} from './helpers.ts'

let server: TestServer
let fixtures: Awaited<ReturnType<typeof seed>>
let as: oauth.AuthorizationServer

const alice = { username: 'alice', password: PASSWORD }
const WEB_REDIRECT = 'https://client.example/cb'
const SPA_REDIRECT = 'https://spa.example/cb'
const options = { [oauth.allowInsecureRequests]: true }

beforeAll(async () => {
  server = await startServer()
  fixtures = await seed(server.db, server.settings.secretKey)
  as = await discover(server.url)
})
afterAll(async () => server?.close())

async function discover(url: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(url)
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: 'oidc' }))
}

interface Key {
  pair: oauth.CryptoKeyPair
  jwk: JWK
  jkt: string
}

async function newKey(): Promise<Key> {
  const pair = (await generateKeyPair('ES256', { extractable: true })) as oauth.CryptoKeyPair
  const jwk = await exportJWK(pair.publicKey)
  return { pair, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') }
}

/** A proof made by hand: by default a good one for `htm` and `htu`; `claims` and `header` change it. */
async function proof(
  key: Key,
  htm: string,
  htu: string,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT({ htm, htu, jti: crypto.randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk, ...header })
    .sign(key.pair.privateKey)
}

const ath = async (token: string) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token))).toString('base64url')

/** The code flow of a client through oauth4webapi, its token request carrying `DPoP`. */
async function codeFlow(
  client: oauth.Client,
  auth: oauth.ClientAuth,
  redirectUri: string,
  scope: string,
  dpop: oauth.DPoPHandle,
) {
  const verifier = oauth.generateRandomCodeVerifier()
  const url = new URL(as.authorization_endpoint as string)
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString()
  const location = await authorizeInBrowser(new Browser(server.url), url.href, alice)
  const params = oauth.validateAuthResponse(as, client, new URL(location))
  const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, {
    ...options,
    DPoP: dpop,
  })
  return oauth.processAuthorizationCodeResponse(as, client, response)
}

const web = (): { client: oauth.Client; auth: oauth.ClientAuth } => ({
  client: { client_id: fixtures.web.uid },
  auth: oauth.ClientSecretBasic(fixtures.web.secret),
})

describe('DPoP (RFC 9449) with oauth4webapi', () => {
  it('the discovery documents list the proof algorithms (5.1)', async () => {
    expect(as.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'RS256', 'EdDSA']))
    const openid = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >
    expect(openid.dpop_signing_alg_values_supported).toEqual(as.dpop_signing_alg_values_supported)
  })

  it('a code redeemed with a proof gives DPoP tokens, taken by /api/v4/user, userinfo and token info with proofs of the key, cnf.jkt in introspection', async () => {
    const key = await newKey()
    const { client, auth } = web()
    const dpop = oauth.DPoP(client, key.pair)
    const tokens = await codeFlow(client, auth, WEB_REDIRECT, 'read_user openid', dpop)
    expect(tokens.token_type).toBe('dpop')

    const user = await oauth.protectedResourceRequest(
      tokens.access_token,
      'GET',
      new URL(`${server.url}/api/v4/user`),
      new Headers(),
      null,
      { ...options, DPoP: dpop },
    )
    expect(user.status).toBe(200)
    expect(await user.json()).toMatchObject({ username: 'alice' })

    const info = await oauth.userInfoRequest(as, client, tokens.access_token, { ...options, DPoP: dpop })
    expect(await oauth.processUserInfoResponse(as, client, String(fixtures.alice.id), info)).toMatchObject({
      sub: String(fixtures.alice.id),
    })

    const tokenInfo = await oauth.protectedResourceRequest(
      tokens.access_token,
      'GET',
      new URL(`${server.url}/oauth/token/info`),
      new Headers(),
      null,
      { ...options, DPoP: dpop },
    )
    expect(await tokenInfo.json()).toMatchObject({ resource_owner_id: fixtures.alice.id, cnf: { jkt: key.jkt } })

    const introspection = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, tokens.access_token, options),
    )
    expect(introspection).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt } })
  })

  it('a bound token sent as a Bearer token is refused with a DPoP challenge (7.1), everywhere a token is taken', async () => {
    const key = await newKey()
    const { client, auth } = web()
    const tokens = await codeFlow(client, auth, WEB_REDIRECT, 'read_user openid', oauth.DPoP(client, key.pair))
    for (const path of ['/api/v4/user', '/oauth/userinfo', `/api/v4/user?access_token=${tokens.access_token}`]) {
      const response = await fetch(`${server.url}${path}`, {
        headers: path.includes('?') ? {} : { authorization: `Bearer ${tokens.access_token}` },
      })
      expect(response.status).toBe(401)
      expect(await response.json()).toEqual({
        error: 'invalid_token',
        error_description: 'The access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof.',
      })
      expect(response.headers.get('www-authenticate')).toMatch(/^DPoP algs="[^"]*ES256[^"]*", error="invalid_token"/)
    }
    const info = await fetch(`${server.url}/oauth/token/info`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    expect(info.status).toBe(401)
    expect(((await info.json()) as { error: string }).error).toBe('invalid_token')
  })

  it('a bearer token sent as a DPoP token is refused: it is bound to no key', async () => {
    const key = await newKey()
    const { client, auth } = web()
    const tokens = await codeFlow(client, auth, WEB_REDIRECT, 'read_user', oauth.DPoP(client, key.pair))
    expect(tokens.token_type).toBe('dpop')
    const { issueToken } = await import('./helpers.ts')
    const bearer = await issueToken(server, {
      applicationId: fixtures.web.id,
      userId: fixtures.alice.id,
      scopes: ['read_user'],
    })
    expect(bearer.token_type).toBe('Bearer')
    const url = `${server.url}/api/v4/user`
    const response = await fetch(url, {
      headers: {
        authorization: `DPoP ${bearer.access_token}`,
        dpop: await proof(key, 'GET', url, { ath: await ath(bearer.access_token) }),
      },
    })
    expect(response.status).toBe(401)
    expect(await response.json()).toEqual({
      error: 'invalid_token',
      error_description: 'The access token is not bound to a DPoP key: send it as a Bearer token.',
    })
  })

  describe('a proof at a resource is refused with invalid_dpop_proof (4.3, 7.1)', () => {
    let key: Key
    let token: string
    const url = () => `${server.url}/api/v4/user`

    beforeAll(async () => {
      key = await newKey()
      const { client, auth } = web()
      token = (await codeFlow(client, auth, WEB_REDIRECT, 'read_user', oauth.DPoP(client, key.pair))).access_token
    })

    async function call(dpop: string | undefined) {
      const response = await fetch(url(), {
        headers: { authorization: `DPoP ${token}`, ...(dpop === undefined ? {} : { dpop }) },
      })
      return {
        status: response.status,
        body: (await response.json()) as Record<string, unknown>,
        challenge: response.headers.get('www-authenticate'),
      }
    }

    const refused = (description: string) => ({
      status: 401,
      body: { error: 'invalid_dpop_proof', error_description: description },
      challenge: expect.stringMatching(/^DPoP algs="[^"]+", error="invalid_dpop_proof", error_description="/),
    })

    it('a good proof is taken once; the same proof again is a replay', async () => {
      const good = await proof(key, 'GET', url(), { ath: await ath(token) })
      expect((await call(good)).status).toBe(200)
      expect(await call(good)).toEqual(refused('The DPoP proof was used before (jti).'))
    })

    it('no proof', async () => {
      expect(await call(undefined)).toEqual(refused('The DPoP header is missing.'))
    })

    it('issued too long ago, or in the future (iat)', async () => {
      for (const iat of [Math.floor(Date.now() / 1000) - 300, Math.floor(Date.now() / 1000) + 300]) {
        expect(await call(await proof(key, 'GET', url(), { ath: await ath(token), iat }))).toEqual(
          refused('The DPoP proof was not issued within the acceptable window (iat).'),
        )
      }
    })

    it('made for another URL or method (htu, htm); the query string does not count', async () => {
      expect(await call(await proof(key, 'GET', `${server.url}/api/v4/users`, { ath: await ath(token) }))).toEqual(
        refused('The DPoP proof was made for another URL (htu).'),
      )
      expect(await call(await proof(key, 'POST', url(), { ath: await ath(token) }))).toEqual(
        refused('The DPoP proof was made for another HTTP method (htm).'),
      )
      expect((await call(await proof(key, 'GET', `${url()}?page=2`, { ath: await ath(token) }))).status).toBe(200)
    })

    it('made for another access token (ath), or with none', async () => {
      expect(await call(await proof(key, 'GET', url(), { ath: await ath('another token') }))).toEqual(
        refused('The DPoP proof was made for another access token (ath).'),
      )
      expect(await call(await proof(key, 'GET', url()))).toEqual(
        refused('The DPoP proof was made for another access token (ath).'),
      )
    })

    it('signed by another key than the token is bound to', async () => {
      const other = await newKey()
      expect(await call(await proof(other, 'GET', url(), { ath: await ath(token) }))).toEqual(
        refused('The DPoP proof is signed by another key than the access token is bound to.'),
      )
    })

    it('not a DPoP proof: another typ, a symmetric algorithm, a private key in the header, a forged signature', async () => {
      const wrongTyp = await proof(key, 'GET', url(), { ath: await ath(token) }, { typ: 'JWT' })
      expect((await call(wrongTyp)).body.error).toBe('invalid_dpop_proof')
      const hs256 = await new SignJWT({ htm: 'GET', htu: url(), jti: 'x', iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt' })
        .sign(new Uint8Array(32))
      expect((await call(hs256)).body.error).toBe('invalid_dpop_proof')
      const privateJwk = await exportJWK(key.pair.privateKey)
      const withPrivate = await proof(key, 'GET', url(), { ath: await ath(token) }, { jwk: privateJwk })
      expect((await call(withPrivate)).body.error).toBe('invalid_dpop_proof')
      const good = await proof(key, 'GET', url(), { ath: await ath(token) })
      const [head, , signature] = good.split('.')
      const forged = `${head}.${Buffer.from(JSON.stringify({ htm: 'GET', htu: url(), jti: 'forged', iat: Math.floor(Date.now() / 1000), ath: await ath(token) })).toString('base64url')}.${signature}`
      expect((await call(forged)).body.error).toBe('invalid_dpop_proof')
      expect((await call('a'.repeat(10_000))).body).toEqual({
        error: 'invalid_dpop_proof',
        error_description: 'The DPoP proof is too large.',
      })
    })
  })

  it('at the token endpoint a refused proof is 400 invalid_dpop_proof (5)', async () => {
    const key = await newKey()
    const { issueCode } = await import('./helpers.ts')
    const code = await issueCode(server, { client: fixtures.web, userId: fixtures.alice.id, redirectUri: WEB_REDIRECT })
    const answer = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT },
      {
        authorization: basic(fixtures.web.uid, fixtures.web.secret),
        dpop: await proof(key, 'POST', `${server.url}/oauth/authorize`),
      },
    )
    expect(answer).toMatchObject({
      status: 400,
      body: { error: 'invalid_dpop_proof', error_description: 'The DPoP proof was made for another URL (htu).' },
    })
  })

  it("a public client's refresh token is bound too: refreshed only with a proof of its key (5)", async () => {
    const key = await newKey()
    const client: oauth.Client = { client_id: fixtures.spa.uid }
    const dpop = oauth.DPoP(client, key.pair)
    const tokens = await codeFlow(client, oauth.None(), SPA_REDIRECT, 'read_user', dpop)
    const refresh = tokens.refresh_token as string
    expect(refresh).toBeDefined()
    const bare = await postForm(server.url, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: fixtures.spa.uid,
    })
    expect(bare).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'The refresh token is bound to a DPoP key: send a DPoP proof of that key.',
      },
    })
    const other = await newKey()
    const withOther = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: refresh, client_id: fixtures.spa.uid },
      { dpop: await proof(other, 'POST', `${server.url}/oauth/token`) },
    )
    expect(withOther.body.error).toBe('invalid_grant')
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refresh, { ...options, DPoP: dpop }),
    )
    expect(refreshed.token_type).toBe('dpop')
    const row = await server.db
      .selectFrom('refresh_tokens')
      .select('dpop_jkt')
      .orderBy('id', 'desc')
      .where('application_id', '=', fixtures.spa.id)
      .executeTakeFirstOrThrow()
    expect(row.dpop_jkt).toBe(key.jkt)
  })

  it('dpop_jkt at the authorization endpoint binds the code: redeemed only with a proof of that key (10)', async () => {
    const key = await newKey()
    const other = await newKey()
    const verifier = oauth.generateRandomCodeVerifier()
    const url = new URL(`${server.url}/oauth/authorize`)
    url.search = new URLSearchParams({
      client_id: fixtures.web.uid,
      redirect_uri: WEB_REDIRECT,
      response_type: 'code',
      scope: 'read_user',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      dpop_jkt: key.jkt,
    }).toString()
    const location = await authorizeInBrowser(new Browser(server.url), url.href, alice)
    const code = new URL(location).searchParams.get('code') as string
    const redeem = async (with_: Key | undefined) =>
      postForm(
        server.url,
        '/oauth/token',
        { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier },
        {
          authorization: basic(fixtures.web.uid, fixtures.web.secret),
          ...(with_ ? { dpop: await proof(with_, 'POST', `${server.url}/oauth/token`) } : {}),
        },
      )
    const refusal = {
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'The code was requested for another DPoP key (dpop_jkt): send a DPoP proof of that key.',
      },
    }
    expect(await redeem(undefined)).toMatchObject(refusal)
    expect(await redeem(other)).toMatchObject(refusal)
    expect(await redeem(key)).toMatchObject({ status: 200, body: { token_type: 'DPoP' } })
  })
})

describe('DPoP server nonces (RFC 9449 8, 9)', () => {
  let nonced: TestServer
  beforeAll(async () => {
    nonced = await startServer({ dpopNonce: true })
  })
  afterAll(async () => nonced?.close())

  it('a proof without the nonce: use_dpop_nonce with DPoP-Nonce, 400 at the token endpoint and 401 at a resource; oauth4webapi retries with it', async () => {
    const data = await seed(nonced.db, nonced.settings.secretKey)
    const key = await newKey()
    const { issueCode } = await import('./helpers.ts')
    const code = await issueCode(nonced, { client: data.web, userId: data.alice.id, redirectUri: WEB_REDIRECT })
    const first = await postForm(
      nonced.url,
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT },
      {
        authorization: basic(data.web.uid, data.web.secret),
        dpop: await proof(key, 'POST', `${nonced.url}/oauth/token`),
      },
    )
    expect(first).toMatchObject({
      status: 400,
      body: { error: 'use_dpop_nonce', error_description: 'Authorization server requires nonce in DPoP proof.' },
    })
    const nonce = first.headers.get('dpop-nonce') as string
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const second = await postForm(
      nonced.url,
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT },
      {
        authorization: basic(data.web.uid, data.web.secret),
        dpop: await proof(key, 'POST', `${nonced.url}/oauth/token`, { nonce }),
      },
    )
    expect(second).toMatchObject({ status: 200, body: { token_type: 'DPoP' } })
    const token = second.body.access_token as string

    const url = `${nonced.url}/api/v4/user`
    const stale = await fetch(url, {
      headers: {
        authorization: `DPoP ${token}`,
        dpop: await proof(key, 'GET', url, { ath: await ath(token), nonce: 'stale' }),
      },
    })
    expect(stale.status).toBe(401)
    expect(stale.headers.get('www-authenticate')).toMatch(/^DPoP algs="[^"]+", error="use_dpop_nonce"/)
    expect(stale.headers.get('dpop-nonce')).toBe(nonce)

    // oauth4webapi keeps the nonce it was given and, told use_dpop_nonce, retries with it
    const client: oauth.Client = { client_id: data.web.uid }
    const dpop = oauth.DPoP(client, key.pair)
    const call = () =>
      oauth.protectedResourceRequest(token, 'GET', new URL(url), new Headers(), null, { ...options, DPoP: dpop })
    let response: Response
    try {
      response = await call()
    } catch (error) {
      expect(oauth.isDPoPNonceError(error)).toBe(true)
      response = await call()
    }
    expect(response.status).toBe(200)
  })
})

const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
const redisUp = await needsService('DPoP replay across instances', 'REDIS_URL')

describe.runIf(redisUp)('DPoP proofs across instances (Redis)', () => {
  it('a proof used at one instance is refused at another: the jti are shared', async () => {
    const one = await startServer({ redisUrl, redisPrefix: `test-${crypto.randomUUID()}:` })
    const two = await buildApp({ database: one.database, settings: one.settings })
    try {
      const data = await seed(one.db, one.settings.secretKey)
      const key = await newKey()
      const { issueCode } = await import('./helpers.ts')
      const code = await issueCode(one, { client: data.web, userId: data.alice.id, redirectUri: WEB_REDIRECT })
      const issued = await postForm(
        one.url,
        '/oauth/token',
        { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT },
        {
          authorization: basic(data.web.uid, data.web.secret),
          dpop: await proof(key, 'POST', `${one.url}/oauth/token`),
        },
      )
      const token = issued.body.access_token as string
      const url = `${one.url}/api/v4/user`
      const headers = { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', url, { ath: await ath(token) }) }
      expect((await one.app.inject({ url: '/api/v4/user', headers })).statusCode).toBe(200)
      const replayed = await two.inject({ url: '/api/v4/user', headers })
      expect([replayed.statusCode, replayed.json()]).toEqual([
        401,
        { error: 'invalid_dpop_proof', error_description: 'The DPoP proof was used before (jti).' },
      ])
    } finally {
      await two.close()
      await one.close()
    }
  })
})
