import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { launchService, type RunningService } from '@campus/shared'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { EnergyDatabase } from '../../energy-data/src/db/schema.ts'
import { createApiKey } from '../../energy-data/src/repositories/api-keys.ts'
import { TWO_CREDENTIALS } from '../../energy-data/src/schemas/errors.ts'
import { energyService } from '../../energy-data/src/service.ts'
import { views } from '../../energy-data/test/fixtures/views.ts'
import { testDatabase } from '../../energy-data/test/harness.ts'
import { createApplication, createUser } from '../../oauth-server/src/accounts.ts'
import { changeMechanism } from '../../oauth-server/src/changes/commit.ts'
import type { OAuthDB } from '../../oauth-server/src/db/schema.ts'
import { setUserLocked } from '../../oauth-server/src/repositories/users.ts'
import { oauthService } from '../../oauth-server/src/service.ts'
import { authorizeInBrowser, Browser, PASSWORD } from '../../oauth-server/test/helpers.ts'
import { onPostgresServer } from '../../oauth-server/test/reliability/processes.ts'
import { registerDataApi, registerResourceServer } from './resource-server.ts'

/** The revocation bound the data API runs with here (seconds). */
const BOUND = 1
const REDIRECT_URI = 'http://127.0.0.1/callback'
const PV_DAY = '/data/pv?start_datetime=2025-10-21%2000:00:00&end_datetime=2025-10-21%2023:45:00'

let oauthDb: TestDatabase<OAuthDB>
let energyDb: TestDatabase<EnergyDatabase>
let oauthServer: RunningService
let energy: RunningService
let dir: string
const logs: string[] = []
const issued: string[] = []
let client: { id: string; secret: string }
let exporter: { id: string; secret: string }
let aliceId: number

function startOAuth(port?: number): Promise<RunningService> {
  return launchService(oauthService, {
    ...(port ? { port } : {}),
    env: {
      OAUTH_DATABASE_URL: oauthDb.url,
      LOG_LEVEL: 'info',
      MIGRATE_ON_START: 'false',
      DATA_DIR: dir,
      OAUTH_SECRET_KEY: '11'.repeat(32),
    },
    inheritEnv: false,
    onLine: (line) => logs.push(line),
  })
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bearer-'))
  oauthDb = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
  energyDb = await testDatabase(views)
  aliceId = (await createUser(oauthDb.db, { username: 'alice', password: PASSWORD })).user.id
  const app = await createApplication(oauthDb.db, {
    name: 'Energy reader',
    redirectUris: [REDIRECT_URI],
    scopes: ['read_energy', 'read_user'],
  })
  client = { id: app.application.uid, secret: app.secret as string }
  const machine = await createApplication(oauthDb.db, {
    name: 'Nightly export',
    redirectUris: ['https://export.example/cb'],
    scopes: ['read_energy'],
    grantTypes: ['client_credentials'],
  })
  exporter = { id: machine.application.uid, secret: machine.secret as string }

  // the resource server, registered as `pnpm start` and docker compose do it
  expect(await registerResourceServer(oauthDb.url, []).exited).toBe(2) // no --secret-file: a usage mistake
  const secret = await registerDataApi(oauthDb.url, dir)

  oauthServer = await startOAuth()
  energy = await launchService(energyService, {
    env: {
      ENERGY_DATABASE_URL: energyDb.url,
      LOG_LEVEL: 'info',
      MIGRATE_ON_START: 'false',
      ENERGY_OAUTH_ISSUER: oauthServer.url,
      ENERGY_OAUTH_CLIENT_SECRET: secret,
      ENERGY_TOKEN_CACHE_SECONDS: String(BOUND),
    },
    inheritEnv: false,
    onLine: (line) => logs.push(line),
  })
})

afterAll(async () => {
  await energy?.stop()
  await oauthServer?.stop()
  await energyDb?.close()
  await oauthDb?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** An access token for alice by code + PKCE, as oauth4webapi's documentation does it. */
async function tokenFor(scope: string): Promise<string> {
  const issuer = new URL(oauthServer.url)
  const options = { [oauth.allowInsecureRequests]: true }
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options))
  const c: oauth.Client = { client_id: client.id }
  const auth = oauth.ClientSecretBasic(client.secret)
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(as.authorization_endpoint as string)
  url.search = new URLSearchParams({
    client_id: client.id,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString()
  const location = await authorizeInBrowser(new Browser(oauthServer.url), url.href, {
    username: 'alice',
    password: PASSWORD,
  })
  const params = oauth.validateAuthResponse(as, c, new URL(location), state)
  const response = await oauth.authorizationCodeGrantRequest(as, c, auth, params, REDIRECT_URI, verifier, options)
  const result = await oauth.processAuthorizationCodeResponse(as, c, response)
  expect(result.scope).toBe(scope)
  issued.push(result.access_token)
  return result.access_token
}

const read = (path: string, headers: Record<string, string> = {}) => fetch(`${energy.url}${path}`, { headers })
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

onPostgresServer('bearer tokens of the OAuth server at the data API (RFC 6750, RFC 7662)', () => {
  it('oauth4webapi obtains a read_energy token by code + PKCE and reads /data/pv', async () => {
    const token = await tokenFor('read_energy')
    const res = await read(PV_DAY, bearer(token))
    expect(res.status).toBe(200)
    const rows = (await res.json()) as unknown[]
    expect(rows).toHaveLength(96)
    // the same answer as with an API key is not the point here; the endpoint rules are
    expect((await read('/auth/apikey/endpoints', bearer(token))).status).toBe(200)
  })

  it('a token without read_energy is 403 with an insufficient_scope challenge on every guarded route: /auth/protected never says whose it is', async () => {
    const token = await tokenFor('read_user')
    for (const path of [PV_DAY, '/auth/protected', '/auth/apikey/endpoints']) {
      const res = await read(path, bearer(token))
      expect([path, res.status]).toEqual([path, 403])
      expect(res.headers.get('www-authenticate')).toBe(
        'Bearer realm="energy-data", error="insufficient_scope", scope="read_energy"',
      )
      expect(await res.json()).toEqual({ detail: 'This access token lacks the read_energy scope' })
    }
  })

  it('no credential: 401 challenging both schemes; an unknown token: 401 invalid_token; both at once: 400', async () => {
    const none = await read(PV_DAY)
    expect(none.status).toBe(401)
    // RFC 9728 5.1: the Bearer and DPoP challenges name the metadata that names the OAuth server
    const metadata = `resource_metadata="${energy.url}/.well-known/oauth-protected-resource"`
    expect(none.headers.get('www-authenticate')).toBe(
      `APIKey, Bearer realm="energy-data", ${metadata}, DPoP algs="ES256 ES384 ES512 PS256 PS384 PS512 RS256 RS384 RS512 EdDSA", ${metadata}`,
    )
    const unknown = await read(PV_DAY, bearer('cmpa_not-a-token'))
    expect(unknown.status).toBe(401)
    expect(unknown.headers.get('www-authenticate')).toMatch(/^Bearer realm="energy-data", error="invalid_token"/)
    const both = await read(PV_DAY, { ...bearer('cmpa_x'), 'x-api-key': 'edk_x' })
    expect(both.status).toBe(400)
    expect(await both.json()).toEqual({ detail: TWO_CREDENTIALS })
  })

  it('one credential sent under both schemes, as a generated client does, is that credential', async () => {
    const token = await tokenFor('read_energy')
    const sameToken = await read(PV_DAY, { ...bearer(token), 'x-api-key': token })
    expect(sameToken.status).toBe(200)
    const { key } = await createApiKey(energyDb.db, { name: 'generated client', endpoints: ['/data/*'] })
    const sameKey = await read(PV_DAY, { ...bearer(key), 'x-api-key': key })
    expect(sameKey.status).toBe(200)
    // a key in both, valid for a path it may not call: judged as the key it is
    expect((await read('/metadata/meters/', { ...bearer(key), 'x-api-key': key })).status).toBe(403)
    // the token and a key of someone else: two credentials
    expect((await read(PV_DAY, { ...bearer(token), 'x-api-key': key })).status).toBe(400)
  })

  it('a revoked token is refused within the bound (ENERGY_TOKEN_CACHE_SECONDS)', async () => {
    const token = await tokenFor('read_energy')
    expect((await read(PV_DAY, bearer(token))).status).toBe(200)
    const revoked = await fetch(`${oauthServer.url}/oauth/revoke`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token }).toString(),
    })
    expect(revoked.status).toBe(200)
    await sleep(BOUND * 1000 + 200)
    const res = await read(PV_DAY, bearer(token))
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
  })

  it("a locked user's token is refused within the bound", async () => {
    const token = await tokenFor('read_energy')
    expect((await read(PV_DAY, bearer(token))).status).toBe(200)
    const changes = changeMechanism(oauthDb.db, { cacheSeconds: 0, notify: true })
    await changes.commit((trx) => setUserLocked(trx, aliceId, true))
    try {
      await sleep(BOUND * 1000 + 200)
      expect((await read(PV_DAY, bearer(token))).status).toBe(401)
    } finally {
      await changes.commit((trx) => setUserLocked(trx, aliceId, false))
    }
    // unlocked, the same token is active again (it was never revoked)
    await sleep(1100)
    expect((await read(PV_DAY, bearer(token))).status).toBe(200)
  })

  it('the OAuth server stopped for 3 seconds does not fail cached tokens; an unseen one gets 503, then works', async () => {
    const seen = await tokenFor('read_energy')
    const unseen = await tokenFor('read_energy')
    expect((await read(PV_DAY, bearer(seen))).status).toBe(200)
    const port = oauthServer.port
    await oauthServer.stop()
    const statuses: number[] = []
    const stoppedAt = Date.now()
    while (Date.now() - stoppedAt < 3000) {
      statuses.push((await read(PV_DAY, bearer(seen))).status)
      await sleep(250)
    }
    // past the cache's bound, so answers came from the stale entry too
    expect(statuses.length).toBeGreaterThan(4)
    expect(new Set(statuses)).toEqual(new Set([200]))
    const refused = await read(PV_DAY, bearer(unseen))
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('5')
    oauthServer = await startOAuth(port)
    expect((await read(PV_DAY, bearer(unseen))).status).toBe(200)
  })

  it('a client credentials token (RFC 6749 4.4) of oauth4webapi reads /data/pv and is revoked by its client', async () => {
    const issuer = new URL(oauthServer.url)
    const options = { [oauth.allowInsecureRequests]: true }
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options))
    const c: oauth.Client = { client_id: exporter.id }
    const auth = oauth.ClientSecretBasic(exporter.secret)
    const response = await oauth.clientCredentialsGrantRequest(as, c, auth, new URLSearchParams(), options)
    const result = await oauth.processClientCredentialsResponse(as, c, response)
    expect(result.scope).toBe('read_energy')
    issued.push(result.access_token)
    expect((await read(PV_DAY, bearer(result.access_token))).status).toBe(200)
    const revoked = await oauth.revocationRequest(as, c, auth, result.access_token, options)
    await oauth.processRevocationResponse(revoked)
    await sleep(BOUND * 1000 + 200)
    expect((await read(PV_DAY, bearer(result.access_token))).status).toBe(401)
  })

  it("no token reaches either service's log", async () => {
    expect(issued.length).toBeGreaterThan(4)
    const text = logs.join('\n')
    expect(text).toContain('"url":"/data/pv') // the requests were logged
    for (const token of issued) expect(text).not.toContain(token)
  })
})
