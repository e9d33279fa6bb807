/**
 * A real headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core, one per test
 * file. Without the executable the suite fails under CI and is skipped elsewhere, saying why.
 * playwright-core loads only when a browser starts, so test files that never launch one do not pay for it.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const missing = !existsSync(CHROMIUM)

/**
 * Whether browser tests should run: always under CI (where a missing Chromium fails the launch
 * loudly), elsewhere only when it is installed, saying so once when it is not.
 */
export function browserAvailable(): boolean {
  if (!missing || process.env.CI) return true
  if (!warned)
    console.warn(
      `browser tests skipped: ${CHROMIUM} not found: apt-get install chromium, or set CHROMIUM_PATH to a Chromium executable; they fail under CI`,
    )
  warned = true
  return false
}
let warned = false

export async function launchChromium(): Promise<Browser> {
  if (missing) throw new Error(`${CHROMIUM} not found: install Debian's chromium package (apt-get install chromium)`)
  const { chromium } = await import('playwright-core')
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
