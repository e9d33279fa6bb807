/**
 * A real headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core, one per test
 * file. Without the executable the suite fails under CI and is skipped elsewhere, saying why.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'
import { describe } from 'vitest'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const missing = !existsSync(CHROMIUM)

if (missing && !process.env.CI) {
  console.warn(`browser tests skipped: ${CHROMIUM} not found (apt-get install chromium); they fail under CI`)
}

/** `describe`, or `describe.skip` when Chromium is missing outside CI (under CI the launch fails loudly). */
export const describeInBrowser = missing && !process.env.CI ? describe.skip : describe

export async function launchChromium(): Promise<Browser> {
  if (missing) throw new Error(`${CHROMIUM} not found: install Debian's chromium package (apt-get install chromium)`)
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

const SCREENSHOTS = fileURLToPath(new URL('../../../../artifacts/screenshots/', import.meta.url))

/** A full-page screenshot under artifacts/screenshots/, for a person to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true })
}

/** Fills the sign-in form (and the TOTP form when a code is given). */
export async function signInOnPage(page: Page, login: string, password: string, otp?: () => string): Promise<void> {
  await page.getByLabel('Username or email').fill(login)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  if (otp) {
    await page.getByLabel('Code from your authenticator app').fill(otp())
    await page.getByRole('button', { name: 'Verify' }).click()
  }
}
