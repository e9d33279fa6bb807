import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { launchService, type RunningService } from '@campus/shared'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { EnergyDatabase } from '../../energy-data/src/db/schema.ts'
import { energyService, FIRST_PARTY_CLIENT_ID } from '../../energy-data/src/service.ts'
import { views } from '../../energy-data/test/fixtures/views.ts'
import { testDatabase } from '../../energy-data/test/harness.ts'
import { createUser } from '../../oauth-server/src/accounts.ts'
import type { OAuthDB } from '../../oauth-server/src/db/schema.ts'
import { oauthService } from '../../oauth-server/src/service.ts'
import { PASSWORD } from '../../oauth-server/test/helpers.ts'
import { getPage, signedIn, submit } from '../../oauth-server/test/pages-helpers.ts'
import { onPostgresServer } from '../../oauth-server/test/reliability/processes.ts'
import { wireIdentity } from '../src/identity.ts'
import { energyCli, LOGIN_PROMPT } from './energy-client.ts'

const FROM = '2025-10-21 00:00:00'
const TO = '2025-10-21 23:45:00'

let oauthDb: TestDatabase<OAuthDB>
let energyDb: TestDatabase<EnergyDatabase>
let oauthServer: RunningService
let energy: RunningService
let dir: string
let config: string

const env = () => ({ XDG_CONFIG_HOME: config, ENERGY_OAUTH_ISSUER: oauthServer.url, ENERGY_URL: energy.url })

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'device-login-'))
  config = join(dir, 'config')
  oauthDb = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
  energyDb = await testDatabase(views)
  await createUser(oauthDb.db, { username: 'alice', password: PASSWORD })
  // the applications as pnpm start registers them: login needs no --client-id after it
  const identity = await wireIdentity({ HOST: '127.0.0.1', DATA_DIR: dir }, oauthDb.url, () => undefined)
  const secret = identity.ENERGY_OAUTH_CLIENT_SECRET as string
  oauthServer = await launchService(oauthService, {
    env: {
      OAUTH_DATABASE_URL: oauthDb.url,
      LOG_LEVEL: 'silent',
      MIGRATE_ON_START: 'false',
      DATA_DIR: dir,
      OAUTH_SECRET_KEY: '22'.repeat(32),
    },
    inheritEnv: false,
  })
  energy = await launchService(energyService, {
    env: {
      ENERGY_DATABASE_URL: energyDb.url,
      LOG_LEVEL: 'silent',
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
  if (dir) rmSync(dir, { recursive: true, force: true })
})

onPostgresServer('pnpm energy login (RFC 8628 device flow) and pnpm energy export', () => {
  it('export before login says to log in (exit 1), as the person typed the command', async () => {
    const args = ['export', '--group', 'pv', '--from', FROM, '--to', TO]
    const run = energyCli({ ...env(), npm_config_user_agent: 'npm/11.6.2 node/v24.11.1 linux x64' }, args)
    expect(await run.exited).toBe(1)
    expect(run.output()).toContain('not signed in: run npm run energy -- login first')
    const underPnpm = energyCli({ ...env(), npm_config_user_agent: 'pnpm/12.0.0 npm/? node/v24.11.1 linux x64' }, args)
    expect(await underPnpm.exited).toBe(1)
    expect(underPnpm.output()).toContain('not signed in: run pnpm energy login first')
  })

  it('login prints the code and the address, waits for the approval, keeps the token 0600; export streams CSV', async () => {
    let shown: ((code: string) => void) | undefined
    const code = new Promise<string>((resolve) => {
      shown = resolve
    })
    const login = energyCli(env(), ['login'], (line) => {
      const match = LOGIN_PROMPT.exec(line)
      if (match) {
        expect(match[1]).toBe(`${oauthServer.url}/oauth/device`)
        shown?.(match[2] as string)
      }
    })
    const userCode = await code
    const browser = await signedIn(oauthServer.url, 'alice', PASSWORD)
    const form = await getPage(browser, '/oauth/device')
    expect((await submit(browser, '/oauth/device', { csrf_token: form.csrf, user_code: userCode })).status).toBe(200)
    const decided = await submit(browser, '/oauth/device', {
      csrf_token: form.csrf,
      user_code: userCode,
      decision: 'approve',
    })
    expect(decided.status).toBe(303)
    expect(await login.exited).toBe(0)
    const file = join(config, 'campus-energy', 'token.json')
    expect(JSON.parse(login.stdout())).toMatchObject({ signed_in: true, token_file: file, scope: 'read_energy' })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { access_token: string; client_id: string }
    expect(stored.client_id).toBe(FIRST_PARTY_CLIENT_ID)

    // the same bytes the data API gives for that token
    const query = new URLSearchParams({ start_datetime: FROM, end_datetime: TO, data_format: 'csv' })
    const direct = await fetch(`${energy.url}/data/pv?${query}`, {
      headers: { authorization: `Bearer ${stored.access_token}` },
    })
    expect(direct.status).toBe(200)
    const expected = await direct.text()
    expect(expected.split('\n').length).toBeGreaterThan(90)

    const toStdout = energyCli(env(), ['export', '--group', 'pv', '--from', FROM, '--to', TO, '--format', 'csv'])
    expect(await toStdout.exited).toBe(0)
    expect(toStdout.stdout()).toBe(expected)
    expect(toStdout.output()).not.toContain('no measurements')
    // a window without data: the header alone, and a line on stderr saying so
    const empty = energyCli(env(), [
      'export',
      '--group',
      'pv',
      '--from',
      '2001-01-01 00:00',
      '--to',
      '2001-01-01 23:45',
    ])
    expect(await empty.exited).toBe(0)
    expect(empty.stdout().split('\r\n').filter(Boolean)).toHaveLength(1)
    expect(empty.output()).toContain(
      'export: no measurements of pv from 2001-01-01 00:00 to 2001-01-01 23:45 (a time without an offset is UTC): the data API holds none in that window',
    )

    const output = join(dir, 'pv.csv')
    const toFile = energyCli(env(), ['export', '--group', 'pv', '--from', FROM, '--to', TO, '--output', output])
    expect(await toFile.exited).toBe(0)
    expect(JSON.parse(toFile.stdout())).toMatchObject({ written: output, group: 'pv' })
    expect(readFileSync(output, 'utf8')).toBe(expected)
  })

  it("the data API's refusals and usage mistakes are told apart (exit 1 and 2)", async () => {
    const bad = energyCli(env(), ['export', '--group', 'pv', '--from', 'yesterday', '--to', TO])
    expect(await bad.exited).toBe(1)
    expect(bad.output()).toContain('the data API answered 422')
    const usage = energyCli(env(), ['export', '--group', 'wind', '--from', FROM, '--to', TO])
    expect(await usage.exited).toBe(2)
    expect(usage.output()).toContain('--group must be one of')
  })

  it('login of a client without the device grant fails with the server’s error code', async () => {
    const run = energyCli(env(), ['login', '--client-id', 'not-a-client'])
    expect(await run.exited).toBe(1)
    expect(run.output()).toContain('invalid_client')
  })
})
