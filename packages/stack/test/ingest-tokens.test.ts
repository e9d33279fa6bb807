import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { launchService, type RunningService } from '@campus/shared'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { EnergyDatabase } from '../../energy-data/src/db/schema.ts'
import { seedEstate } from '../../energy-data/src/seed/seed.ts'
import { ingestService } from '../../ingest/src/service.ts'
import { createApplication } from '../../oauth-server/src/accounts.ts'
import type { OAuthDB } from '../../oauth-server/src/db/schema.ts'
import { oauthService } from '../../oauth-server/src/service.ts'
import { onPostgresServer } from '../../oauth-server/test/reliability/processes.ts'
import { registerDataApi } from './resource-server.ts'

let oauthDb: TestDatabase<OAuthDB>
let energyDb: TestDatabase<EnergyDatabase>
let oauthServer: RunningService
let ingest: RunningService
let dir: string
const apps: Record<string, { id: string; secret: string }> = {}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ingest-tokens-'))
  oauthDb = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
  energyDb = await createTestDatabase<EnergyDatabase>('energy', ingestService.migrationsDir)
  await seedEstate(energyDb.pool, { fromMs: Date.UTC(2024, 0, 1), toMs: Date.UTC(2024, 0, 1, 0, 15), seed: 1 })
  for (const [name, scopes] of [
    ['gateway', ['write_energy']],
    ['reader', ['read_energy']],
  ] as const) {
    const made = await createApplication(oauthDb.db, {
      name,
      redirectUris: ['https://gateway.example/cb'],
      scopes: [...scopes],
      grantTypes: ['client_credentials'],
    })
    apps[name] = { id: made.application.uid, secret: made.secret as string }
  }
  const secret = await registerDataApi(oauthDb.url, dir)
  oauthServer = await launchService(oauthService, {
    env: {
      OAUTH_DATABASE_URL: oauthDb.url,
      MIGRATE_ON_START: 'false',
      DATA_DIR: dir,
      OAUTH_SECRET_KEY: '11'.repeat(32),
    },
    inheritEnv: false,
  })
  ingest = await launchService(ingestService, {
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
  await ingest?.stop()
  await oauthServer?.stop()
  await energyDb?.close()
  await oauthDb?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A client-credentials token, as oauth4webapi's documentation gets one. */
async function tokenOf(app: { id: string; secret: string }, scope: string): Promise<string> {
  const issuer = new URL(oauthServer.url)
  const options = { [oauth.allowInsecureRequests]: true }
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options))
  const client: oauth.Client = { client_id: app.id }
  const response = await oauth.clientCredentialsGrantRequest(
    as,
    client,
    oauth.ClientSecretBasic(app.secret),
    new URLSearchParams({ scope }),
    options,
  )
  return (await oauth.processClientCredentialsResponse(as, client, response)).access_token
}

const post = (headers: Record<string, string>) =>
  fetch(`${ingest.url}/ingest/senml`, {
    method: 'POST',
    headers: { 'content-type': 'application/senml+json', ...headers },
    body: JSON.stringify([{ n: 'urn:campus:meter:900', t: Date.now() / 1000 - 3600, v: 12.5 }]),
  })

onPostgresServer('access tokens of the OAuth server at the ingest service', () => {
  it('a gateway’s client-credentials token with write_energy writes; a token that only reads does not', async () => {
    const written = await post({ authorization: `Bearer ${await tokenOf(apps.gateway!, 'write_energy')}` })
    expect(written.status).toBe(200)
    expect(await written.json()).toMatchObject({ samples: 1, quarantined: 0 })

    const reader = await post({ authorization: `Bearer ${await tokenOf(apps.reader!, 'read_energy')}` })
    expect(reader.status).toBe(403)
    expect(((await reader.json()) as { detail: string }).detail).toMatch(/write_energy/)
    expect((await post({ authorization: 'Bearer not-a-token' })).status).toBe(401)
    const count = await energyDb.pool.query('select count(*) as n from meter_samples')
    expect(Number(count.rows[0].n)).toBe(1)
  })
})
