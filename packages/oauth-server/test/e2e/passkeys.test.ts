/**
 * Passkeys in a real Chromium, with a virtual authenticator of the DevTools protocol's WebAuthn
 * domain (through playwright-core's CDP session): added on the two-factor page, used as the second
 * factor after the password, used alone without a password, removed with the password; the pages
 * without JavaScript show no passkey button and still sign in with a code. The relying party is
 * `localhost`: browsers refuse an IP address as a WebAuthn RP ID.
 */
import type { Browser, CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createUser } from '../../src/accounts.ts'
import { timeStep, totp } from '../../src/domain/totp.ts'
import { PASSWORD, startServer, type TestServer } from '../helpers.ts'
import { describeInBrowser, launchChromium, screenshot, signInOnPage } from './chromium.ts'

describeInBrowser('passkeys (WebAuthn) in Chromium', () => {
  let server: TestServer
  let browser: Browser
  let page: Page
  let cdp: CDPSession
  let authenticatorId: string
  let base: string
  let otpSecret: string
  // the server takes each time step's code once: each sign-in here uses a step not used before
  let lastStep = Number.NEGATIVE_INFINITY
  const freshCode = (): string => {
    lastStep = Math.max(timeStep(Date.now()), lastStep + 1)
    return totp(otpSecret, lastStep * 30_000)
  }

  beforeAll(async () => {
    server = await startServer()
    base = server.url.replace('127.0.0.1', 'localhost')
    server.settings.issuer = base
    otpSecret = (
      await createUser(server.db, {
        username: 'pia',
        password: PASSWORD,
        with2fa: true,
        secretKey: server.settings.secretKey,
      })
    ).otpSecret as string
    browser = await launchChromium()
    page = await (await browser.newContext()).newPage()
    cdp = await page.context().newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    ;({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    }))
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(`${base}/users/sign_in`)
  }

  const events = async (name: string) =>
    (await server.db.selectFrom('audit_events').select('custom_message').where('event_name', '=', name).execute()).map(
      (e) => e.custom_message,
    )

  it('is added on the two-factor page once TOTP is on', async () => {
    await page.goto(`${base}/profile/two_factor_auth`)
    await signInOnPage(page, 'pia', PASSWORD, freshCode)
    await page.waitForURL(`${base}/profile/two_factor_auth`)
    await page.getByLabel('Name of the passkey').fill('Laptop')
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('The passkey Laptop was added.')
    await expect(page.getByRole('cell', { name: 'Laptop', exact: true }).count()).resolves.toBe(1)
    await screenshot(page, 'two-factor-passkeys')
    // a discoverable credential on the authenticator, so that it can sign in without a username
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials.map((c) => c.isResidentCredential)).toEqual([true])
    expect(await events('passkey_added')).toEqual(['Added the passkey Laptop'])
  })

  it('signs in alone, without a password (it verified its user)', async () => {
    await signOut()
    await page.getByRole('button', { name: 'Use a passkey instead' }).click()
    await page.waitForURL(`${base}/profile/applications`)
    expect(await events('user_signed_in')).toContain('Signed in with passkey')
  })

  it('is the second factor after the password, instead of a code', async () => {
    await signOut()
    await page.getByLabel('Username or email').fill('pia')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/users\/two_factor/)
    await page.getByRole('button', { name: 'Use a passkey' }).click()
    await page.waitForURL(`${base}/profile/applications`)
    expect(await events('user_signed_in')).toContain('Signed in with password and passkey')
  })

  it('without JavaScript the pages show no passkey button and sign in with a code', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    const plain = await context.newPage()
    await plain.goto(`${base}/users/sign_in`)
    await expect(plain.getByRole('button', { name: 'Use a passkey instead' }).isVisible()).resolves.toBe(false)
    await signInOnPage(plain, 'pia', PASSWORD, freshCode)
    await plain.waitForURL(`${base}/profile/applications`)
    await context.close()
  })

  it('is removed with the current password; a wrong password removes nothing', async () => {
    await page.goto(`${base}/profile/two_factor_auth`)
    await page.getByLabel('Current password').first().fill('not the password')
    await page.getByRole('button', { name: 'Remove the passkey Laptop' }).click()
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('the password is not correct')
    await page.getByLabel('Current password').first().fill(PASSWORD)
    await page.getByRole('button', { name: 'Remove the passkey Laptop' }).click()
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('The passkey Laptop was removed.')
    expect(await server.db.selectFrom('passkeys').select('id').execute()).toEqual([])
    expect(await events('passkey_removed')).toEqual(['Removed the passkey Laptop'])
  })
})
