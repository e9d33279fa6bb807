/**
 * Pushed authorization requests (RFC 9126): oauth4webapi pushes, the browser carries only the
 * request_uri, the pushed parameters (and no others) make the code; a request_uri is used once,
 * expires, belongs to its client; an application may be required to push.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
const REDIRECT = 'https://client.example/cb'
const options = { [oauth.allowInsecureRequests]: true }

beforeAll(async () => {
  server = await startServer()
  fixtures = await seed(server.db, server.settings.secretKey)
  const issuer = new URL(server.url)
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options))
})
afterAll(async () => server?.close())

const web = (): { client: oauth.Client; auth: oauth.ClientAuth } => ({
  client: { client_id: fixtures.web.uid },
  auth: oauth.ClientSecretBasic(fixtures.web.secret),
})

/** Pushes a request for the web application through oauth4webapi; its request_uri and PKCE verifier. */
async function push(parameters: Record<string, string> = {}, dpop?: oauth.DPoPHandle) {
  const { client, auth } = web()
  const verifier = oauth.generateRandomCodeVerifier()
  const response = await oauth.pushedAuthorizationRequest(
    as,
    client,
    auth,
    new URLSearchParams({
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'read_user',
      state: 'pushed-state',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...parameters,
    }),
    { ...options, ...(dpop ? { DPoP: dpop } : {}) },
  )
  const pushed = await oauth.processPushedAuthorizationResponse(as, client, response)
  return { requestUri: pushed.request_uri, expiresIn: pushed.expires_in, verifier }
}

const authorizeUrl = (requestUri: string, extra: Record<string, string> = {}) =>
  `${server.url}/oauth/authorize?${new URLSearchParams({ client_id: fixtures.web.uid, request_uri: requestUri, ...extra })}`

async function redeem(location: string, verifier: string, dpop?: oauth.DPoPHandle) {
  const { client, auth } = web()
  const params = oauth.validateAuthResponse(as, client, new URL(location), 'pushed-state')
  const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, {
    ...options,
    ...(dpop ? { DPoP: dpop } : {}),
  })
  return oauth.processAuthorizationCodeResponse(as, client, response)
}

describe('pushed authorization requests (RFC 9126)', () => {
  it('the metadata names the endpoint (5)', () => {
    expect(as.pushed_authorization_request_endpoint).toBe(`${server.url}/oauth/par`)
    expect(as.require_pushed_authorization_requests).toBe(false)
  })

  it('the browser carries only the request_uri; the pushed parameters make the code, others beside it are ignored (4)', async () => {
    const { requestUri, expiresIn, verifier } = await push()
    expect(requestUri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/)
    expect(expiresIn).toBe(60)
    // a scope beside the request_uri is not the pushed one, and is not used
    const location = await authorizeInBrowser(
      new Browser(server.url),
      authorizeUrl(requestUri, { scope: 'api' }),
      alice,
    )
    const tokens = await redeem(location, verifier)
    expect(tokens.scope).toBe('read_user')
  })

  it('a request_uri is used once: after the decision it is refused, on a page', async () => {
    const { requestUri } = await push()
    await authorizeInBrowser(new Browser(server.url), authorizeUrl(requestUri), alice)
    const again = await new Browser(server.url).request(authorizeUrl(requestUri))
    expect(again.status).toBe(400)
    expect(await again.text()).toContain('The request_uri is unknown, expired, already used, or of another client.')
  })

  it('a request_uri not opened within its expires_in, or sent by another client, is refused', async () => {
    const { requestUri } = await push()
    const other = await new Browser(server.url).request(
      `${server.url}/oauth/authorize?${new URLSearchParams({ client_id: fixtures.other.uid, request_uri: requestUri })}`,
    )
    expect(other.status).toBe(400)
    await server.db
      .updateTable('pushed_authorization_requests')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('opened_at', 'is', null)
      .execute()
    const late = await new Browser(server.url).request(authorizeUrl(requestUri))
    expect(late.status).toBe(400)
    expect(await late.text()).toContain('The request_uri is unknown, expired, already used, or of another client.')
  })

  it('errors come back as JSON (2.3): unregistered redirect URI, a request_uri pushed, no client authentication, a scope not allowed', async () => {
    const auth = { authorization: basic(fixtures.web.uid, fixtures.web.secret) }
    const base = { response_type: 'code', code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' }
    expect(
      await postForm(server.url, '/oauth/par', { ...base, redirect_uri: 'https://evil.example/cb' }, auth),
    ).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', error_description: 'The redirect_uri is not registered for this application.' },
    })
    expect(
      await postForm(server.url, '/oauth/par', { ...base, redirect_uri: REDIRECT, request_uri: 'urn:x' }, auth),
    ).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_request',
        error_description: 'request_uri is not allowed in a pushed authorization request.',
      },
    })
    expect(await postForm(server.url, '/oauth/par', { ...base, redirect_uri: REDIRECT })).toMatchObject({
      status: 401,
      body: { error: 'invalid_client' },
    })
    expect(
      await postForm(server.url, '/oauth/par', { ...base, redirect_uri: REDIRECT, scope: 'write_energy' }, auth),
    ).toMatchObject({ status: 400, body: { error: 'invalid_scope' } })
  })

  it('an application that must push is refused a plain authorization request, and served a pushed one (5)', async () => {
    await server.db
      .updateTable('applications')
      .set({ require_pushed_authorization_requests: true })
      .where('id', '=', fixtures.web.id)
      .execute()
    try {
      const plain = await new Browser(server.url).request(
        `${server.url}/oauth/authorize?${new URLSearchParams({ client_id: fixtures.web.uid, redirect_uri: REDIRECT, response_type: 'code', scope: 'read_user' })}`,
      )
      expect(plain.status).toBe(302)
      const error = new URL(plain.headers.get('location') as string)
      expect(Object.fromEntries(error.searchParams)).toMatchObject({
        error: 'invalid_request',
        error_description: 'Pushed authorization request required: post the request to /oauth/par first (RFC 9126).',
      })
      const { requestUri, verifier } = await push()
      const location = await authorizeInBrowser(new Browser(server.url), authorizeUrl(requestUri), alice)
      expect((await redeem(location, verifier)).access_token).toBeDefined()
    } finally {
      await server.db
        .updateTable('applications')
        .set({ require_pushed_authorization_requests: false })
        .where('id', '=', fixtures.web.id)
        .execute()
    }
  })

  it('a DPoP proof sent with the push binds the code to its key (RFC 9449 10.1)', async () => {
    const pair = (await generateKeyPair('ES256', { extractable: true })) as oauth.CryptoKeyPair
    const { client } = web()
    const dpop = oauth.DPoP(client, pair)
    const { requestUri, verifier } = await push({}, dpop)
    const row = await server.db
      .selectFrom('pushed_authorization_requests')
      .select('dpop_jkt')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    expect(row.dpop_jkt).toBe(await calculateJwkThumbprint(await exportJWK(pair.publicKey), 'sha256'))
    const location = await authorizeInBrowser(new Browser(server.url), authorizeUrl(requestUri), alice)
    const code = new URL(location).searchParams.get('code') as string
    const otherPair = await generateKeyPair('ES256', { extractable: true })
    const otherProof = await new SignJWT({
      htm: 'POST',
      htu: `${server.url}/oauth/token`,
      jti: crypto.randomUUID(),
      iat: Math.floor(Date.now() / 1000),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(otherPair.publicKey) })
      .sign(otherPair.privateKey)
    const refused = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      { authorization: basic(fixtures.web.uid, fixtures.web.secret), dpop: otherProof },
    )
    expect(refused.body.error).toBe('invalid_grant')
    const retry = await push({}, dpop)
    const tokens = await redeem(
      await authorizeInBrowser(new Browser(server.url), authorizeUrl(retry.requestUri), alice),
      retry.verifier,
      dpop,
    )
    expect(tokens.token_type).toBe('dpop')
  })
})
