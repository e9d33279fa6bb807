/** The shared real-browser helpers, and the sign-in steps the OAuth pages share. */
import { browserAvailable, launchChromium, screenshot } from '@campus/shared/testing'
import type { Page } from 'playwright-core'
import { describe } from 'vitest'

export { launchChromium, screenshot }

/** `describe`, or `describe.skip` when Chromium is missing outside CI. */
export const describeInBrowser = browserAvailable() ? describe : describe.skip

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
