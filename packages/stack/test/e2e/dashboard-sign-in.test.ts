/**
 * In a real Chromium: the dashboard signs a person in through the OAuth server. Both services
 * run as their own processes on PostgreSQL, registered with each other as `pnpm start` does it
 * (`wireIdentity`: the data API as a resource server, its browser side as a public, trusted
 * first-party application). The page's own script runs code + PKCE, keeps the token in
 * sessionStorage, loads the charts with it, and forgets (and revokes) it on sign-out.
 */
import { freePort } from '@campus/shared'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { energyService } from '../../../energy-data/src/service.ts'
import { createUser } from '../../../oauth-server/src/accounts.ts'
import { oauthService } from '../../../oauth-server/src/service.ts'
import { describeInBrowser, screenshot } from '../../../oauth-server/test/e2e/chromium.ts'
import { wireIdentity } from '../../src/identity.ts'
import { PASSWORD, startTwoServices, type TwoServices } from './two-services.ts'

const TOKEN_KEY = 'energy-dashboard:token'

describeInBrowser('dashboard sign-in in Chromium', () => {
  let stack: TwoServices
  let oauth: TwoServices['oauth']
  let energy: TwoServices['energy']
  let browser: TwoServices['browser']

  beforeAll(async () => {
    stack = await startTwoServices({
      name: 'dashboard-sign-in',
      prepare: async ({ oauthDb, dir }) => {
        await createUser(oauthDb.db, { username: 'dana', password: PASSWORD, name: 'Dana', email: 'dana@example.org' })
        // registered with each other as `pnpm start` does it
        const [oauthPort, energyPort] = [await freePort(), await freePort()]
        const identity = await wireIdentity(
          { HOST: '127.0.0.1', DATA_DIR: dir, [oauthService.portEnv]: oauthPort, [energyService.portEnv]: energyPort },
          oauthDb.url,
          () => undefined,
        )
        return { oauthPort, energyPort, energyEnv: identity }
      },
    })
    ;({ oauth, energy, browser } = stack)
  })
  afterAll(async () => stack?.close())

  /** Every chart drawn: its status line emptied by the script (a failure writes the reason there). */
  const chartsDrawn = (page: Page) =>
    expect.poll(() => page.locator('figure .status').allTextContents(), { timeout: 20_000 }).toEqual(['', '', '', ''])

  it('signs in by code + PKCE, loads the charts with the bearer token, and signs out', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const sent: Array<{ path: string; authorization: string | undefined }> = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.origin === energy.url) sent.push({ path: url.pathname, authorization: request.headers().authorization })
    })

    // signed out: the public charts, no credential anywhere
    await page.goto(`${energy.url}/dashboard?lang=en`)
    await chartsDrawn(page)
    expect(sent.filter((r) => r.path.startsWith('/chart/'))).toHaveLength(4)
    expect(sent.every((r) => r.authorization === undefined)).toBe(true)
    sent.length = 0

    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.url()).toContain(`${oauth.url}/users/sign_in`)
    await page.getByLabel('Username or email').fill('dana')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    // a trusted first-party application: no consent page, straight back to the dashboard
    await expect.poll(() => page.locator('.account .who').textContent(), { timeout: 20_000 }).toBe('Signed in as dana')
    // the code and state left the address; the language chosen before signing in stays
    expect(page.url()).toBe(`${energy.url}/dashboard?lang=en`)
    await chartsDrawn(page)
    const token = await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)
    expect(token).toMatch(/\S{20,}/)
    const bearer = `Bearer ${token}`
    // the key-protected check of the token, and every chart, carried it
    expect(sent.find((r) => r.path === '/auth/protected')?.authorization).toBe(bearer)
    const charts = sent.filter((r) => r.path.startsWith('/chart/'))
    expect(charts.map((r) => r.path).sort()).toEqual(
      ['/chart/acqua', '/chart/bilancio', '/chart/fontanelle', '/chart/fotovoltaico'].sort(),
    )
    expect(charts.every((r) => r.authorization === bearer)).toBe(true)
    // the token is the OAuth server's, accepted by the data API on a key-only endpoint
    const check = await fetch(`${energy.url}/data/pv`, { headers: { authorization: bearer } })
    expect(check.status).toBe(200)
    await screenshot(page, 'dashboard-signed-in')

    // sign out: the page forgets the token and the OAuth server revokes it
    sent.length = 0
    await page.getByRole('button', { name: 'Sign out' }).click()
    await expect.poll(() => page.getByRole('button', { name: 'Sign in' }).isVisible()).toBe(true)
    await chartsDrawn(page)
    expect(await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)).toBeNull()
    expect(await page.locator('.account .who').textContent()).toBe('')
    expect(sent.filter((r) => r.path.startsWith('/chart/')).every((r) => r.authorization === undefined)).toBe(true)
    await expect
      .poll(async () => (await fetch(`${energy.url}/auth/protected`, { headers: { authorization: bearer } })).status, {
        timeout: 15_000,
      })
      .toBe(401)
    await context.close()
  })

  it("authorizes Swagger UI by code + PKCE: its Authorize button's token calls a key-protected endpoint", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const refused = refusedByPolicy(page)
    await page.goto(`${energy.url}/docs`)
    await page.locator('button.authorize').first().click()
    const dialog = page.locator('.modal-ux')
    // client id and scope come from the service's configuration (initOAuth)
    await expect.poll(() => dialog.locator('#client_id_authorizationCode').inputValue()).toBe('energy-dashboard')
    const popupOpened = context.waitForEvent('page')
    await dialog.locator('.auth-btn-wrapper button.authorize').last().click()
    const popup = await popupOpened
    await expect.poll(() => popup.url()).toContain(`${oauth.url}/users/sign_in`)
    await popup.getByLabel('Username or email').fill('dana')
    await popup.getByLabel('Password').fill(PASSWORD)
    const tokenRequest = page.waitForRequest((r) => r.url() === `${oauth.url}/oauth/token`)
    await popup.getByRole('button', { name: 'Sign in' }).click()
    const body = new URLSearchParams((await tokenRequest).postData() ?? '')
    expect(body.get('grant_type')).toBe('authorization_code')
    // a public client: the OAuth server redeems its code only with the verifier of the S256 challenge
    expect(body.get('code_verifier')).toMatch(/^[\w-]{43,128}$/)
    expect(body.get('redirect_uri')).toBe(`${energy.url}/docs/static/oauth2-redirect.html`)
    const token = await (await tokenRequest).response()
    expect(token?.status()).toBe(200)
    expect(await token?.json()).toMatchObject({ token_type: 'Bearer', scope: 'read_energy' })
    await expect
      .poll(() => dialog.locator('button', { hasText: 'Logout' }).count(), { timeout: 20_000 })
      .toBeGreaterThan(0)
    await dialog.locator('button.close-modal').first().click()

    // Try it out on GET /auth/protected: the request carries the token, the answer names dana
    const operation = page.locator('#operations-Developers-getAuthProtected')
    await operation.locator('.opblock-summary').click()
    await operation.getByRole('button', { name: 'Try it out' }).click()
    const call = page.waitForResponse((r) => new URL(r.url()).pathname === '/auth/protected')
    await operation.getByRole('button', { name: 'Execute' }).click()
    const answer = await call
    expect(answer.request().headers().authorization).toMatch(/^Bearer \S{20,}$/)
    expect(answer.status()).toBe(200)
    expect(await answer.json()).toEqual({ status: 'authenticated', user: 'dana' })
    await expect.poll(() => operation.locator('.live-responses-table tbody').textContent()).toContain('"user": "dana"')
    await screenshot(page, 'swagger-authorized')
    // the page's security policy refused nothing it needs, here or on the OAuth server's /docs
    const oauthDocs = await context.newPage()
    const refusedThere = refusedByPolicy(oauthDocs)
    await oauthDocs.goto(`${oauth.url}/docs`)
    await oauthDocs.locator('.opblock').first().waitFor()
    expect([...refused, ...refusedThere]).toEqual([])
    await context.close()
  })
})

/** Console errors of `page` saying its Content Security Policy refused something, as they come. */
function refusedByPolicy(page: Page): string[] {
  const refused: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error' && message.text().includes('Content Security Policy')) refused.push(message.text())
  })
  return refused
}
