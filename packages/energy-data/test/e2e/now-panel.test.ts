/**
 * The dashboard's "Now" panel in a real Chromium: each datalogger's last sample and status, the
 * main meters' readings, the alerts firing; a new sample through the write path shows without a
 * reload (server-sent events). The screenshot lands in artifacts/screenshots/ (and ALERTS_SCREENSHOT).
 */
import { browserAvailable, launchChromium, screenshot } from '@campus/shared/testing'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultSettings } from '../../src/config.ts'
import type { EnergyApp } from '../../src/energy-app.ts'
import { takeMessages } from '../../src/repositories/sample-writes.ts'
import { inTransaction } from '../../src/repositories/transaction.ts'
import { type Harness, seeded, startHarness } from '../harness.ts'

describe.skipIf(!browserAvailable())('the "Now" panel in Chromium', () => {
  let h: Harness
  let browser: Browser

  /** A reading of `meter` from datalogger `dl`, arriving now, through the one write path. */
  const sample = (dl: string, meter: number, value: number, unit: string) => {
    const at = Date.now()
    const pack = JSON.stringify([{ n: `urn:campus:meter:${meter}`, t: at / 1000 - 1, v: value, u: unit }])
    return inTransaction(h.database.pool, (client) =>
      takeMessages(client, [
        { source: `mqtt:campus/${dl}/senml`, datalogger: dl, payload: Buffer.from(pack), receivedMs: at },
      ]),
    )
  }

  beforeAll(async () => {
    h = await startHarness({
      data: seeded({ from: '2025-01-01', to: '2025-01-02', seed: '6' }),
      // the panel follows each tick: a second here, ALERT_EVALUATION_SECONDS (5 s) by default
      settings: { alerts: { ...defaultSettings().alerts, evaluationMs: 1000 } },
      listen: true,
    })
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await h?.close()
  })

  it('shows live and stale dataloggers, readings and firing alerts, and a new sample without a reload', async () => {
    await sample('DL-AULEP-01', 860, 1.25, 'kWh')
    await sample('DL-CAST-01', 870, 0.5, 'kWh')
    const key = await h.key(['/alerts/*'])
    const rule = await h.app.inject({
      method: 'POST',
      url: '/alerts/rules',
      headers: { 'x-api-key': key },
      payload: { kind: 'stale', name: 'meteo_silent', datalogger: 'DL-METEO-01', minutes: 5, severity: 'critical' },
    })
    expect(rule.statusCode).toBe(201)
    await (h.app as unknown as EnergyApp).alerts.tick()

    const page = await browser.newPage({
      viewport: { width: 1400, height: 1100 },
      extraHTTPHeaders: { 'accept-language': 'en' },
    })
    await page.goto(`${h.base}/dashboard`)
    const row = (id: string) => page.locator(`.now-dataloggers tr[data-datalogger="${id}"]`)
    await row('DL-AULEP-01').locator('.state').filter({ hasText: 'live' }).waitFor()
    expect(await row('DL-METEO-01').locator('.state').textContent()).toBe('stale')
    await page.locator('.now-alerts li.alert').filter({ hasText: 'meteo_silent' }).waitFor()
    const reading = page.locator('.now-meters tr[data-meter="860"] .reading')
    expect(await reading.textContent()).toBe('1.25 kWh')

    // a new sample of 860: the panel shows it, the page never reloads
    await page.evaluate(() => {
      ;(globalThis as { firstLoad?: boolean }).firstLoad = true
    })
    await sample('DL-AULEP-01', 860, 2.75, 'kWh')
    // two increments: the panel reads the rate between them, in kW
    await page.waitForFunction(
      () =>
        (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document
          .querySelector('.now-meters tr[data-meter="860"] .reading')
          ?.textContent.endsWith(' kW') === true,
      undefined,
      { timeout: 10_000 },
    )
    expect(await page.evaluate(() => (globalThis as { firstLoad?: boolean }).firstLoad)).toBe(true)
    await screenshot(page, 'energy-dashboard-now')
    if (process.env.ALERTS_SCREENSHOT) await page.screenshot({ path: process.env.ALERTS_SCREENSHOT, fullPage: true })
    await page.close()
  }, 60_000)
})
