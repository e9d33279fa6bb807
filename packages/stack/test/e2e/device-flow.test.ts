/**
 * The device flow end to end in a real Chromium: `pnpm energy login` (its own process) prints the
 * code and the address; the browser opens it, signs in, enters the code and authorizes; the CLI
 * gets its token and `pnpm energy export` writes the CSV. Both services run as their own
 * processes on PostgreSQL, the data API introspecting the token at the OAuth server.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '@campus/shared'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { views } from '../../../energy-data/test/fixtures/views.ts'
import { testDatabase } from '../../../energy-data/test/harness.ts'
import { createApplication, createUser } from '../../../oauth-server/src/accounts.ts'
import { DEVICE_CODE_GRANT } from '../../../oauth-server/src/domain/grant-types.ts'
import { describeInBrowser, screenshot, signInOnPage } from '../../../oauth-server/test/e2e/chromium.ts'
import { energyCli, LOGIN_PROMPT } from '../energy-client.ts'
import { registerDataApi } from '../resource-server.ts'
import { PASSWORD, startTwoServices, type TwoServices } from './two-services.ts'

describeInBrowser('the device flow in Chromium: pnpm energy login, then export', () => {
  let stack: TwoServices
  let oauth: TwoServices['oauth']
  let energy: TwoServices['energy']
  let browser: TwoServices['browser']
  let dir: string
  let clientId: string

  beforeAll(async () => {
    stack = await startTwoServices({
      name: 'device-flow',
      energyDatabase: () => testDatabase(views),
      prepare: async ({ oauthDb, dir }) => {
        await createUser(oauthDb.db, { username: 'erin', password: PASSWORD, name: 'Erin', email: 'erin@example.org' })
        const { application } = await createApplication(oauthDb.db, {
          name: 'Energy CLI',
          redirectUris: ['http://127.0.0.1/cb'],
          scopes: ['read_energy'],
          confidential: false,
          grantTypes: [DEVICE_CODE_GRANT],
        })
        clientId = application.uid
        const secret = await registerDataApi(oauthDb.url, dir)
        // the data API introspects at the OAuth server: its address is fixed before either starts
        const oauthPort = await freePort()
        return {
          oauthPort,
          energyEnv: { ENERGY_OAUTH_ISSUER: `http://127.0.0.1:${oauthPort}`, ENERGY_OAUTH_CLIENT_SECRET: secret },
        }
      },
    })
    ;({ oauth, energy, browser, dir } = stack)
  })
  afterAll(async () => stack?.close())

  it('the CLI prints the code, the browser signs in and enters it, the CLI gets its token and exports CSV', async () => {
    const env = { XDG_CONFIG_HOME: join(dir, 'config'), ENERGY_OAUTH_ISSUER: oauth.url, ENERGY_URL: energy.url }
    let shown: ((prompt: { url: string; code: string }) => void) | undefined
    const prompt = new Promise<{ url: string; code: string }>((resolve) => {
      shown = resolve
    })
    const login = energyCli(env, ['login', '--client-id', clientId], (line) => {
      const match = LOGIN_PROMPT.exec(line)
      if (match) shown?.({ url: match[1] as string, code: match[2] as string })
    })
    const { url, code } = await prompt

    const page = await (await browser.newContext()).newPage()
    try {
      await page.goto(url)
      await signInOnPage(page, 'erin', PASSWORD)
      await page.waitForURL(`${oauth.url}/oauth/device`)
      await page.getByLabel('The code your device shows').fill(code)
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.getByRole('heading', { name: 'Authorize Energy CLI?' }).waitFor()
      expect(await page.textContent('main')).toContain(code)
      await page.getByRole('button', { name: 'Authorize' }).click()
      await page.getByRole('status').waitFor()
      expect(await page.getByRole('status').textContent()).toBe('Energy CLI is authorized: go back to your device.')
    } catch (error) {
      await screenshot(page, 'device-flow')
      throw error
    }

    expect(await login.exited).toBe(0)
    expect(JSON.parse(login.stdout())).toMatchObject({ signed_in: true, scope: 'read_energy' })
    const output = join(dir, 'pv.csv')
    const exported = energyCli(env, [
      'export',
      '--group',
      'pv',
      '--from',
      '2025-10-21 00:00:00',
      '--to',
      '2025-10-21 23:45:00',
      '--format',
      'csv',
      '--output',
      output,
    ])
    expect(await exported.exited).toBe(0)
    // the bytes the data API gives for the token the CLI keeps
    const stored = JSON.parse(readFileSync(join(dir, 'config', 'campus-energy', 'token.json'), 'utf8')) as {
      access_token: string
    }
    const query = new URLSearchParams({
      start_datetime: '2025-10-21 00:00:00',
      end_datetime: '2025-10-21 23:45:00',
      data_format: 'csv',
    })
    const direct = await fetch(`${energy.url}/data/pv?${query}`, {
      headers: { authorization: `Bearer ${stored.access_token}` },
    })
    const expected = await direct.text()
    expect(expected.split('\n').length).toBeGreaterThan(90)
    expect(readFileSync(output, 'utf8')).toBe(expected)
  })
})
