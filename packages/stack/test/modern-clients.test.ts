/**
 * Today's clients against both services as processes: openid-client and oauth4webapi with DPoP
 * (RFC 9449) and pushed authorization requests (RFC 9126) through the code flow, then DPoP-bound
 * calls to /api/v4/user and to the data API; a client that knows only the data API's URL finds
 * the OAuth server through its protected resource metadata (RFC 9728).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { launchService, type RunningService } from '@campus/shared'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import * as oauth from 'oauth4webapi'
import * as openid from 'openid-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { EnergyDatabase } from '../../energy-data/src/db/schema.ts'
import { energyService } from '../../energy-data/src/service.ts'
import { views } from '../../energy-data/test/fixtures/views.ts'
import { testDatabase } from '../../energy-data/test/harness.ts'
import { createApplication, createUser } from '../../oauth-server/src/accounts.ts'
import type { OAuthDB } from '../../oauth-server/src/db/schema.ts'
import { oauthService } from '../../oauth-server/src/service.ts'
import { authorizeInBrowser, Browser, PASSWORD } from '../../oauth-server/test/helpers.ts'
import { onPostgresServer } from '../../oauth-server/test/reliability/processes.ts'
import { registerDataApi } from './resource-server.ts'

const REDIRECT_URI = 'http://127.0.0.1/callback'
const PV_DAY = '/data/pv?start_datetime=2025-10-21%2000:00:00&end_datetime=2025-10-21%2023:45:00'
const insecure = { [oauth.allowInsecureRequests]: true }

let oauthDb: TestDatabase<OAuthDB>
let energyDb: TestDatabase<EnergyDatabase>
let oauthServer: RunningService
let energy: RunningService
let dir: string
let confidential: { id: string; secret: string }
let publicClient: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'modern-clients-'))
  oauthDb = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
  energyDb = await testDatabase(views)
  await createUser(oauthDb.db, { username: 'alice', password: PASSWORD })
  const scopes = ['read_energy', 'read_user', 'openid']
  const app = await createApplication(oauthDb.db, { name: 'Modern web app', redirectUris: [REDIRECT_URI], scopes })
  confidential = { id: app.application.uid, secret: app.secret as string }
  const spa = await createApplication(oauthDb.db, {
    name: 'Modern SPA',
    redirectUris: [REDIRECT_URI],
    scopes,
    confidential: false,
  })
  publicClient = spa.application.uid
  const secret = await registerDataApi(oauthDb.url, dir)
  oauthServer = await launchService(oauthService, {
    env: {
      OAUTH_DATABASE_URL: oauthDb.url,
      MIGRATE_ON_START: 'false',
      DATA_DIR: dir,
      OAUTH_SECRET_KEY: '22'.repeat(32),
      // nonces on: both libraries must answer use_dpop_nonce by themselves
      OAUTH_DPOP_NONCE: 'true',
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    },
    inheritEnv: false,
  })
  energy = await launchService(energyService, {
    env: {
      ENERGY_DATABASE_URL: energyDb.url,
      MIGRATE_ON_START: 'false',
      ENERGY_OAUTH_ISSUER: oauthServer.url,
      ENERGY_OAUTH_CLIENT_SECRET: secret,
    },
    inheritEnv: false,
  })
})

afterAll(async () => {
  await energy?.stop()
  await oauthServer?.stop()
  await energyDb?.close()
  await oauthDb?.close()
  rmSync(dir, { recursive: true, force: true })
})

const signIn = (url: URL) =>
  authorizeInBrowser(new Browser(oauthServer.url), url.href, { username: 'alice', password: PASSWORD })

onPostgresServer('today\u2019s clients: DPoP, PAR and protected resource metadata against both services', () => {
  it('openid-client: PAR and DPoP through the code flow, then DPoP-bound calls to /api/v4/user and the data API', async () => {
    const config = await openid.discovery(new URL(oauthServer.url), confidential.id, confidential.secret, undefined, {
      execute: [openid.allowInsecureRequests],
    })
    const dpop = openid.getDPoPHandle(config, await openid.randomDPoPKeyPair('ES256'))
    const verifier = openid.randomPKCECodeVerifier()
    const state = openid.randomState()
    const url = await openid.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: REDIRECT_URI,
        scope: 'openid read_user read_energy',
        code_challenge: await openid.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      },
      { DPoP: dpop },
    )
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri'])
    const tokens = await openid.authorizationCodeGrant(
      config,
      new URL(await signIn(url)),
      { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true },
      undefined,
      { DPoP: dpop },
    )
    expect(tokens.token_type).toBe('dpop')
    const user = await openid.fetchProtectedResource(
      config,
      tokens.access_token,
      new URL(`${oauthServer.url}/api/v4/user`),
      'GET',
      undefined,
      undefined,
      { DPoP: dpop },
    )
    expect([user.status, ((await user.json()) as { username: string }).username]).toEqual([200, 'alice'])
    const data = await openid.fetchProtectedResource(
      config,
      tokens.access_token,
      new URL(`${energy.url}${PV_DAY}`),
      'GET',
      undefined,
      undefined,
      { DPoP: dpop },
    )
    expect(data.status).toBe(200)
    expect((await data.json()) as unknown[]).toHaveLength(96)
  })

  it('oauth4webapi (a public client): PAR and DPoP, the nonce learned and used, a DPoP call to each service; a bearer use or another key refused', async () => {
    const issuer = new URL(oauthServer.url)
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure))
    const client: oauth.Client = { client_id: publicClient }
    const keys = await oauth.generateKeyPair('ES256')
    const dpop = oauth.DPoP(client, keys)
    const verifier = oauth.generateRandomCodeVerifier()
    const parameters = new URLSearchParams({
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'read_user read_energy',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    // oauth4webapi leaves the retry to its caller: the first push learns the nonce
    const pushOnce = () =>
      oauth.pushedAuthorizationRequest(as, client, oauth.None(), parameters, { ...insecure, DPoP: dpop })
    let pushed: oauth.PushedAuthorizationResponse
    try {
      pushed = await oauth.processPushedAuthorizationResponse(as, client, await pushOnce())
      throw new Error('a proof without the nonce was taken')
    } catch (error) {
      expect(oauth.isDPoPNonceError(error)).toBe(true)
      pushed = await oauth.processPushedAuthorizationResponse(as, client, await pushOnce())
    }
    const url = new URL(as.authorization_endpoint as string)
    url.search = new URLSearchParams({ client_id: publicClient, request_uri: pushed.request_uri }).toString()
    const params = oauth.validateAuthResponse(as, client, new URL(await signIn(url)))
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT_URI, verifier, {
        ...insecure,
        DPoP: dpop,
      }),
    )
    expect(tokens.token_type).toBe('dpop')
    const call = (target: string) =>
      oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(target), new Headers(), null, {
        ...insecure,
        DPoP: dpop,
      })
    expect((await call(`${oauthServer.url}/api/v4/user`)).status).toBe(200)
    expect((await call(`${energy.url}${PV_DAY}`)).status).toBe(200)

    const asBearer = await fetch(`${energy.url}${PV_DAY}`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    expect(asBearer.status).toBe(401)
    expect(await asBearer.json()).toEqual({
      detail: 'The access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof.',
    })
    expect(asBearer.headers.get('www-authenticate')).toMatch(/^DPoP algs="[^"]+", error="invalid_token", /)

    const other = await generateKeyPair('ES256')
    const proof = await new SignJWT({
      htm: 'GET',
      htu: `${energy.url}/data/pv`,
      jti: crypto.randomUUID(),
      iat: Math.floor(Date.now() / 1000),
      ath: Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(tokens.access_token))).toString(
        'base64url',
      ),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(other.publicKey) })
      .sign(other.privateKey)
    const otherKey = await fetch(`${energy.url}${PV_DAY}`, {
      headers: { authorization: `DPoP ${tokens.access_token}`, dpop: proof },
    })
    expect(otherKey.status).toBe(401)
    expect(await otherKey.json()).toEqual({
      detail: 'The DPoP proof is signed by another key than the access token is bound to.',
    })
    expect(otherKey.headers.get('www-authenticate')).toMatch(/^DPoP algs="[^"]+", error="invalid_dpop_proof", /)
  })

  it('a client that knows only the data API finds the OAuth server (RFC 9728): from a 401 and from the well-known URL', async () => {
    const refused = await fetch(`${energy.url}${PV_DAY}`)
    expect(refused.status).toBe(401)
    const challenge = refused.headers.get('www-authenticate') as string
    const named = /Bearer [^,]*(?:, [a-z_]+="[^"]*")*?, resource_metadata="([^"]+)"/.exec(challenge)?.[1]
    expect(named).toBe(`${energy.url}/.well-known/oauth-protected-resource`)

    const resource = new URL(energy.url)
    const metadata = await oauth.processResourceDiscoveryResponse(
      resource,
      await oauth.resourceDiscoveryRequest(resource, insecure),
    )
    expect(metadata).toMatchObject({
      resource: energy.url,
      authorization_servers: [oauthServer.url],
      scopes_supported: ['read_energy'],
      bearer_methods_supported: ['header'],
    })
    const issuer = new URL(metadata.authorization_servers?.[0] as string)
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure))
    expect(as.token_endpoint).toBe(`${oauthServer.url}/oauth/token`)

    // the OAuth server is a resource too: /api/v4 and userinfo
    const own = new URL(oauthServer.url)
    const ownMetadata = await oauth.processResourceDiscoveryResponse(
      own,
      await oauth.resourceDiscoveryRequest(own, insecure),
    )
    expect(ownMetadata.authorization_servers).toEqual([oauthServer.url])
    const api = await fetch(`${oauthServer.url}/api/v4/user`)
    expect(api.headers.get('www-authenticate')).toBe(
      `Bearer realm="Protected by OAuth 2", resource_metadata="${oauthServer.url}/.well-known/oauth-protected-resource"`,
    )
  })
})
