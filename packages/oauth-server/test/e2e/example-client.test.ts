/**
 * In a real Chromium: the example third-party application (examples/oauth-web-client, built on
 * oauth4webapi) signs users in with the authorization-code flow and PKCE, also for a 2FA user
 * (TOTP computed here), and with the implicit flow whose fragment its page script reads.
 */
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startExample } from '../../../../examples/oauth-web-client/server.ts'
import { createApplication, createUser } from '../../src/accounts.ts'
import { totp } from '../../src/domain/totp.ts'
import { PASSWORD, seed, startServer, type TestServer } from '../helpers.ts'
import { describeInBrowser, launchChromium, screenshot, signInOnPage } from './chromium.ts'

describeInBrowser('the example web application in Chromium', () => {
  let server: TestServer
  let fixtures: Awaited<ReturnType<typeof seed>>
  let browser: Browser
  let example: Awaited<ReturnType<typeof startExample>>

  beforeAll(async () => {
    server = await startServer()
    fixtures = await seed(server.db, server.settings.secretKey)
    await createUser(server.db, { username: 'carol', password: PASSWORD, name: 'Carol' })
    const registered = await createApplication(server.db, {
      name: 'Example Client',
      redirectUris: ['http://127.0.0.1/callback', 'http://127.0.0.1/implicit/callback'],
      scopes: ['read_user'],
    })
    example = await startExample({
      issuer: server.url,
      clientId: registered.application.uid,
      clientSecret: registered.secret as string,
    })
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await example?.close()
    await server?.close()
  })

  it('authorization code with PKCE: sign in, consent, callback, token, /api/v4/user on its page', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(example.url)
    await page.getByRole('link', { name: 'Sign in with Campus' }).click()
    await expect.poll(() => page.url()).toContain('/users/sign_in')
    await screenshot(page, 'sign-in')
    await signInOnPage(page, 'alice', PASSWORD)
    await expect.poll(() => page.title()).toBe('Authorize Example Client')
    await expect(page.getByRole('heading', { name: 'Authorize Example Client?' }).isVisible()).resolves.toBe(true)
    await screenshot(page, 'consent')
    await page.getByRole('button', { name: 'Authorize' }).click()
    await expect.poll(() => page.title()).toBe('Signed in as alice')
    expect(new URL(page.url()).origin).toBe(example.url)
    const user = JSON.parse((await page.locator('#user').textContent()) as string)
    expect(user).toMatchObject({ username: 'alice', email: 'alice@example.org', name: 'Alice' })
    await screenshot(page, 'example-client-signed-in')
    await context.close()
  })

  it('the same for a user with two-factor authentication (TOTP)', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${example.url}/login`)
    await page.getByLabel('Username or email').fill('bob')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.url()).toContain('/users/two_factor')
    await screenshot(page, 'two-factor-step')
    await page.getByLabel('Code from your authenticator app').fill(totp(fixtures.bob.otpSecret))
    await page.getByRole('button', { name: 'Verify' }).click()
    await page.getByRole('button', { name: 'Authorize' }).click()
    await expect.poll(() => page.title()).toBe('Signed in as bob')
    await context.close()
  })

  it('implicit flow: the token arrives in the fragment and the page script reads it', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${example.url}/implicit`)
    await signInOnPage(page, 'carol', PASSWORD)
    await page.getByRole('button', { name: 'Authorize' }).click()
    await expect.poll(() => page.locator('#result').textContent()).toBe('Signed in as carol')
    // the script removed the token from the address bar
    expect(page.url()).toBe(`${example.url}/implicit/callback`)
    expect(JSON.parse((await page.locator('#user').textContent()) as string).username).toBe('carol')
    await context.close()
  })
})
