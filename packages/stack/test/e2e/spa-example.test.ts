/**
 * In a real Chromium, across origins: the single-page example (examples/spa) is served from its
 * own loopback port, both services run as their own processes on PostgreSQL, and the browser
 * alone runs code + PKCE as a public client, redeems the code at /oauth/token, then calls
 * /api/v4/user with the token and /data/pv with an API key. Every cross-origin call works only
 * if the services answer CORS (and its preflights) as they should.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startSpa } from '../../../../examples/spa/serve.ts'
import { createApiKey } from '../../../energy-data/src/repositories/api-keys.ts'
import { createApplication, createUser } from '../../../oauth-server/src/accounts.ts'
import { describeInBrowser, screenshot } from '../../../oauth-server/test/e2e/chromium.ts'
import { PASSWORD, startTwoServices, type TwoServices } from './two-services.ts'

describeInBrowser('the single-page example in Chromium, across origins', () => {
  let stack: TwoServices
  let oauth: TwoServices['oauth']
  let energy: TwoServices['energy']
  let browser: TwoServices['browser']
  let spa: Awaited<ReturnType<typeof startSpa>>

  beforeAll(async () => {
    let clientId = ''
    let apiKey = ''
    stack = await startTwoServices({
      name: 'spa-example',
      prepare: async ({ oauthDb, energyDb }) => {
        await createUser(oauthDb.db, { username: 'dana', password: PASSWORD, name: 'Dana', email: 'dana@example.org' })
        const { application } = await createApplication(oauthDb.db, {
          name: 'Campus SPA',
          redirectUris: ['http://127.0.0.1/callback'],
          scopes: ['read_user'],
          confidential: false,
        })
        clientId = application.uid
        apiKey = (await createApiKey(energyDb.db, { name: 'spa', endpoints: ['/data/*'] })).key
        return {}
      },
    })
    ;({ oauth, energy, browser } = stack)
    spa = await startSpa({ issuer: oauth.url, clientId, dataApi: energy.url, apiKey })
  })
  afterAll(async () => {
    await spa?.close()
    await stack?.close()
  })

  it('signs in, consents, redeems the code through CORS, then shows /api/v4/user and /data/pv', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const crossOrigin: string[] = []
    page.on('request', (request) => {
      const origin = new URL(request.url()).origin
      if (origin !== spa.url) crossOrigin.push(`${request.method()} ${origin}${new URL(request.url()).pathname}`)
    })
    await page.goto(spa.url)
    expect(new URL(spa.url).port).not.toBe(new URL(oauth.url).port)
    await page.getByRole('button', { name: 'Sign in with Campus' }).click()
    await expect.poll(() => page.url()).toContain(`${oauth.url}/users/sign_in`)
    await page.getByLabel('Username or email').fill('dana')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    // a public client is asked every time
    await expect.poll(() => page.title()).toBe('Authorize Campus SPA')
    await page.getByRole('button', { name: 'Authorize' }).click()

    await expect.poll(() => page.locator('#status').textContent(), { timeout: 20_000 }).toBe('Done')
    expect(new URL(page.url()).origin).toBe(spa.url)
    expect(await page.locator('#title').textContent()).toBe('Signed in as dana')
    const user = JSON.parse((await page.locator('#user').textContent()) as string)
    expect(user).toMatchObject({ username: 'dana', name: 'Dana', email: 'dana@example.org' })
    expect(await page.locator('#data').textContent()).toMatch(/^[1-9]\d* rows of photovoltaic production$/)
    expect(await page.locator('#file').textContent()).toMatch(
      /^CSV: attachment; filename="pv_\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}_15min\.csv"$/,
    )
    await screenshot(page, 'spa-signed-in')

    // what the page's script sent across origins (a browser sends the preflights of the last
    // three itself, for the Authorization and x-api-key headers, and shows them to no one)
    expect(crossOrigin).toEqual(
      expect.arrayContaining([
        `GET ${oauth.url}/.well-known/oauth-authorization-server`,
        `POST ${oauth.url}/oauth/token`,
        `GET ${oauth.url}/api/v4/user`,
        `GET ${energy.url}/data/pv`,
      ]),
    )
    await context.close()
  })
})
