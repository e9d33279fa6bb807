/**
 * In a real Chromium: register an application through /profile/applications, sign in to the
 * example client with its credentials, renew the secret (the old one stops working), revoke the
 * authorization (the client's token stops working); create and revoke a personal access token;
 * enable two-factor authentication; the admin pages. Screenshots of each page for people to check.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startExample } from '../../../../examples/oauth-web-client/server.ts'
import { createApplication, createUser } from '../../src/accounts.ts'
import { totp } from '../../src/domain/totp.ts'
import { PASSWORD, startServer, type TestServer } from '../helpers.ts'
import { describeInBrowser, launchChromium, screenshot, signInOnPage } from './chromium.ts'

describeInBrowser('account pages in Chromium', () => {
  let server: TestServer
  let browser: Browser
  let context: BrowserContext
  let page: Page
  const examples: Array<Awaited<ReturnType<typeof startExample>>> = []
  let recoveryCodes: string[] = []

  async function example(clientId: string, clientSecret: string) {
    const started = await startExample({ issuer: server.url, clientId, clientSecret })
    examples.push(started)
    return started
  }

  beforeAll(async () => {
    server = await startServer()
    await createUser(server.db, { username: 'dana', password: PASSWORD, email: 'dana@example.org', name: 'Dana' })
    await createUser(server.db, { username: 'root', password: PASSWORD, name: 'Administrator', admin: true })
    await createApplication(server.db, {
      name: 'Campus Wiki',
      redirectUris: ['https://wiki.example/cb'],
      scopes: ['openid'],
    })
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1100, height: 900 } })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url })
    page = await context.newPage()
    await page.goto(`${server.url}/profile/applications`)
    await signInOnPage(page, 'dana@example.org', PASSWORD)
    await page.waitForURL(`${server.url}/profile/applications`)
  })
  afterAll(async () => {
    await browser?.close()
    for (const e of examples) await e.close()
    await server?.close()
  })

  it('registers an application, uses it, renews its secret, and revokes the authorization', async () => {
    // validation first: the form comes back with the input
    await page.getByLabel('Name', { exact: true }).fill('Dana’s Client')
    await page.getByLabel('Redirect URIs').fill('http://127.0.0.1/callback\nftp//nope')
    await page.getByRole('button', { name: 'Save application' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Select at least one scope.')
    await expect(page.getByRole('alert').textContent()).resolves.toContain('ftp//nope is not an absolute URI')
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Dana’s Client')
    await screenshot(page, 'applications-validation')

    await page.getByLabel('Redirect URIs').fill('http://127.0.0.1/callback')
    await page.locator('input[name=scopes][value=read_user]').check()
    await page.getByRole('button', { name: 'Save application' }).click()
    await expect.poll(() => page.title()).toBe('Dana’s Client')
    const uid = (await page.locator('#uid').textContent()) as string
    const secret = (await page.locator('#secret').textContent()) as string
    expect(secret).toMatch(/^cmps_/)
    // the copy button appears with JavaScript and copies the secret
    const copy = page.locator('button[data-copy=secret]')
    await copy.click()
    await expect.poll(() => copy.textContent()).toBe('Copied')
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret)
    await screenshot(page, 'application-created')
    await page.reload()
    expect(await page.locator('#secret').count()).toBe(0)

    // a flow with these credentials
    const first = await example(uid, secret)
    await page.goto(`${first.url}/login`)
    await page.getByRole('button', { name: 'Authorize' }).click()
    await expect.poll(() => page.title()).toBe('Signed in as dana')

    // renew: the old secret stops working at once, the new one works
    await page.goto(`${server.url}/profile/applications`)
    await page.getByRole('link', { name: 'Dana’s Client' }).click()
    await page.getByRole('button', { name: 'Renew secret' }).click()
    const renewed = (await page.locator('#secret').textContent()) as string
    expect(renewed).not.toBe(secret)
    await page.goto(`${first.url}/login`)
    await expect.poll(() => page.title()).toBe('Sign-in failed')
    expect(await page.locator('#error').textContent()).toContain('invalid_client')
    const second = await example(uid, renewed)
    await page.goto(`${second.url}/login`)
    await expect.poll(() => page.title()).toBe('Signed in as dana')
    await page.goto(`${second.url}/me`)
    await expect.poll(() => page.title()).toBe('Signed in as dana')

    // revoke the authorization: the client's token stops working
    await page.goto(`${server.url}/profile/applications`)
    await screenshot(page, 'applications')
    await page.getByRole('button', { name: 'Revoke Dana’s Client' }).click()
    await expect(page.getByRole('status').textContent()).resolves.toContain('The authorization was revoked.')
    await page.goto(`${second.url}/me`)
    await expect.poll(() => page.title()).toBe('Not signed in')

    // edit, then delete through the confirmation page
    await page.goto(`${server.url}/profile/applications`)
    await page.getByRole('link', { name: 'Dana’s Client' }).click()
    await page.getByRole('link', { name: 'Edit' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Renamed Client')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await expect.poll(() => page.title()).toBe('Renamed Client')
    await page.getByRole('link', { name: 'Delete' }).click()
    await screenshot(page, 'application-delete')
    await page.getByRole('button', { name: 'Delete application' }).click()
    await expect(page.getByRole('status').textContent()).resolves.toContain(
      'The application Renamed Client was deleted.',
    )
  })

  it('creates a personal access token shown once, which works, and revokes it', async () => {
    await page.goto(`${server.url}/profile/personal_access_tokens`)
    await page.getByLabel('Token name').fill('laptop')
    await page.getByLabel('Expiration date').fill('2099-01-31')
    await page.locator('input[name=scopes][value=read_user]').check()
    await page.getByRole('button', { name: 'Create personal access token' }).click()
    const token = (await page.locator('#token').textContent()) as string
    expect(token).toMatch(/^cmpp_/)
    await screenshot(page, 'personal-access-tokens')
    const api = (value: string) => fetch(`${server.url}/api/v4/user`, { headers: { 'private-token': value } })
    expect((await api(token)).status).toBe(200)
    await page.getByRole('button', { name: 'Revoke laptop' }).click()
    await expect(page.getByRole('status').textContent()).resolves.toContain('The token was revoked.')
    expect(await page.locator('#token').count()).toBe(0)
    expect((await api(token)).status).toBe(401)
  })

  it('enables two-factor authentication from the QR page and shows the recovery codes once', async () => {
    await page.goto(`${server.url}/profile/two_factor_auth`)
    expect(await page.locator('.qr svg').isVisible()).toBe(true)
    await screenshot(page, 'two-factor-enrol')
    const key = ((await page.locator('#otp-secret').textContent()) as string).replace(/ /g, '')
    await page.getByLabel('Code from your authenticator app').fill(totp(key))
    await page.getByRole('button', { name: 'Enable two-factor authentication' }).click()
    recoveryCodes = await page.locator('#recovery-codes li').allTextContents()
    expect(recoveryCodes).toHaveLength(10)
    await page.getByRole('button', { name: 'Copy codes' }).click()
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(recoveryCodes.join('\n'))
    await screenshot(page, 'two-factor-recovery-codes')
    await page.reload()
    expect(await page.locator('#recovery-codes').count()).toBe(0)
  })

  it('lets an administrator lock a user and trust an application', async () => {
    const admin = await browser.newContext({ viewport: { width: 1100, height: 900 } })
    const adminPage = await admin.newPage()
    await adminPage.goto(`${server.url}/admin/users`)
    await signInOnPage(adminPage, 'root', PASSWORD)
    await adminPage.getByRole('button', { name: 'Lock dana' }).click()
    await expect(adminPage.getByRole('status').textContent()).resolves.toContain('The user was locked.')
    await screenshot(adminPage, 'admin-users')
    // dana's session ended with the lock
    await page.goto(`${server.url}/profile/applications`)
    expect(page.url()).toContain('/users/sign_in')
    await adminPage.getByRole('button', { name: 'Unlock dana' }).click()
    await expect(adminPage.getByRole('status').textContent()).resolves.toContain('The user was unlocked.')
    await adminPage.goto(`${server.url}/admin/applications`)
    await adminPage.getByRole('button', { name: 'Trust Campus Wiki' }).click()
    await expect(adminPage.getByRole('status').textContent()).resolves.toContain('The application is trusted.')
    await screenshot(adminPage, 'admin-applications')
    await admin.close()
    // unlocked, dana signs in again with a recovery code; the admin pages do not exist for her
    await signInOnPage(page, 'dana', PASSWORD, () => recoveryCodes[0] as string)
    await expect.poll(() => page.title()).toBe('Applications')
    const response = await page.goto(`${server.url}/admin/users`)
    expect(response?.status()).toBe(404)
  })
})
