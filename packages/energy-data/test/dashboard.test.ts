import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { views } from './fixtures/views.ts'
import { type Harness, startHarness } from './harness.ts'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ data: views })
})
afterAll(async () => h?.close())

const get = (url: string, headers: Record<string, string> = {}) => h.app.inject({ method: 'GET', url, headers })

const CSP = /^default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';/

describe('GET /dashboard', () => {
  it('is an HTML page with a canvas per chart, the local scripts and a strict CSP', async () => {
    const res = await get('/dashboard')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['content-security-policy']).toMatch(CSP)
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    const html = res.body
    expect(html).toMatch(/^<!doctype html>\n<html lang="it">/)
    expect(html).toContain('<title>Cruscotto energetico del campus</title>')
    expect(html).toMatch(/<noscript><p class="notice">I grafici richiedono JavaScript/)
    for (const chart of ['fotovoltaico', 'bilancio', 'acqua', 'fontanelle']) {
      expect(html).toContain(`<canvas data-chart="${chart}"`)
    }
    // every script has a same-origin src: nothing inline for the CSP to block, no third party
    const scripts = [...html.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)]
    expect(scripts.map((m) => /src="([^"]+)"/.exec(m[1]!)?.[1])).toEqual([
      '/dashboard/assets/chart.umd.min.js',
      '/dashboard/assets/dashboard.js',
    ])
    expect(scripts.every((m) => m[2] === '')).toBe(true)
    expect(html).not.toMatch(/\sstyle=|<style|\son[a-z]+=|https?:\/\//)
    // each linked asset is served
    for (const [, url] of html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)) {
      expect((await get(url!)).statusCode, url).toBe(200)
    }
  })

  it('follows Accept-Language, Italian when it names neither language, and lang over both', async () => {
    const lang = async (headers: Record<string, string>, query = '') =>
      /<html lang="(..)">/.exec((await get(`/dashboard${query}`, headers)).body)?.[1]
    expect(await lang({ 'accept-language': 'en-GB,en;q=0.9' })).toBe('en')
    expect(await lang({ 'accept-language': 'it-IT,it;q=0.9,en;q=0.8' })).toBe('it')
    expect(await lang({ 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.5' })).toBe('en')
    expect(await lang({ 'accept-language': 'de-DE' })).toBe('it')
    expect(await lang({})).toBe('it')
    expect(await lang({ 'accept-language': 'en' }, '?lang=it')).toBe('it')
    const res = await get('/dashboard', { 'accept-language': 'en' })
    expect(res.headers.vary).toBe('Accept-Language')
  })

  it("says how far each chart's data reaches and warns when that is more than a day ago", async () => {
    // the fixture ends on 2025-10-28 at 00:00 local; the app's clock is today
    const html = (await get('/dashboard?lang=en')).body
    expect(html.match(/<p class="until stale">Data up to 28\/10\/2025, 00:00<\/p>/g)).toHaveLength(4)
    expect(html).toContain(
      '<p class="notice stale" role="alert">Warning: the newest data of photovoltaic, Aule P balance, water, fountains is more than a day old (up to 28/10/2025, 00:00).',
    )
    expect(html).not.toContain('updated every 15 minutes')
  })

  it('switches to English with lang=en and links both languages', async () => {
    const html = (await get('/dashboard?lang=en')).body
    expect(html).toMatch(/<html lang="en">/)
    expect(html).toContain('<title>Campus energy dashboard</title>')
    expect(html).toContain('<a href="/dashboard?lang=it" hreflang="it" lang="it">Italiano</a>')
    expect(html).toContain('<a href="/dashboard?lang=en" hreflang="en" lang="en" aria-current="page">English</a>')
  })

  it('answers 422 for an unknown language and 304 to a client holding the page', async () => {
    const bad = await get('/dashboard?lang=fr')
    expect(bad.statusCode).toBe(422)
    expect(bad.json()).toEqual({ detail: [{ loc: ['query', 'lang'], msg: expect.any(String), type: 'enum' }] })
    const page = await get('/dashboard')
    const again = await get('/dashboard', { 'if-none-match': page.headers.etag as string })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
  })
})

describe('GET /dashboard/assets/:name', () => {
  it('serves Chart.js from the installed package, never from a CDN', async () => {
    const res = await get('/dashboard/assets/chart.umd.min.js')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(res.headers['cache-control']).toBe('public, max-age=86400')
    const dist = dirname(createRequire(import.meta.url).resolve('chart.js'))
    expect(res.body).toBe(readFileSync(join(dist, 'chart.umd.min.js'), 'utf8'))
    expect(res.body).toMatch(/^\/\*!?\s*\n?\s*\* Chart\.js v4/)
  })

  it('serves the page script, which draws each canvas from its chart endpoint, and the style sheet', async () => {
    const script = await get('/dashboard/assets/dashboard.js')
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(script.body).toContain('fetch(`/chart/')
    expect(script.body).toContain("document.querySelectorAll('canvas[data-chart]')")
    expect(script.body).toContain('new window.Chart(canvas, config)')
    const css = await get('/dashboard/assets/dashboard.css')
    expect(css.statusCode).toBe(200)
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8')
    expect(css.headers['content-security-policy']).toMatch(CSP)
  })

  it('answers 404 for any other name and 304 for a current copy', async () => {
    for (const name of ['nope.js', '..%2Fpage.ts', 'constructor']) {
      const res = await get(`/dashboard/assets/${name}`)
      expect(res.statusCode, name).toBe(404)
      expect(res.json()).toEqual({ detail: 'Not Found' })
    }
    const first = await get('/dashboard/assets/dashboard.css')
    expect(
      (await get('/dashboard/assets/dashboard.css', { 'if-none-match': first.headers.etag as string })).statusCode,
    ).toBe(304)
  })
})

describe('GET /dashboard with sign-in', () => {
  const oauth = {
    issuer: 'https://login.example:8443',
    clientId: 'energy-data',
    clientSecret: 'secret',
    cacheSeconds: 5,
    staleSeconds: 60,
  }

  it('offers sign-in and lets the page reach the OAuth server, and only it, when a browser client is configured; so does Swagger UI', async () => {
    const signIn = await startHarness({ settings: { oauth: { ...oauth, browserClientId: 'energy-dashboard' } } })
    const tokensOnly = await startHarness({ settings: { oauth } })
    try {
      const res = await signIn.app.inject({ url: '/dashboard?lang=en&code=abc&state=xyz&iss=https%3A%2F%2Fx' })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-security-policy']).toContain(
        "connect-src 'self' https://login.example:8443; base-uri 'none'; form-action 'self'",
      )
      expect(res.body).toContain(
        '<section class="account" aria-label="Account" data-issuer="https://login.example:8443" data-client-id="energy-dashboard">',
      )
      expect(res.body).toContain('<button type="button" class="sign-in">Sign in</button>')
      // an OAuth server without a browser client: tokens accepted, nobody signed in here
      const plain = await tokensOnly.app.inject({ url: '/dashboard' })
      expect(plain.headers['content-security-policy']).toMatch(CSP)
      expect(plain.body).not.toContain('class="account"')

      // Swagger UI's Authorize: the same client by code + PKCE, and the OAuth server reachable from /docs
      const init = await signIn.app.inject({ url: '/docs/static/swagger-initializer.js' })
      expect(init.body).toContain(
        'ui.initOAuth({"clientId":"energy-dashboard","scopes":["read_energy"],"usePkceWithAuthorizationCodeGrant":true})',
      )
      expect(init.headers['content-security-policy']).toMatch(/; connect-src 'self' https:\/\/login\.example:8443;$/)
      const plainInit = await tokensOnly.app.inject({ url: '/docs/static/swagger-initializer.js' })
      expect(plainInit.body).toContain('ui.initOAuth({})')
      expect(plainInit.headers['content-security-policy']).not.toContain('connect-src')
    } finally {
      await Promise.all([signIn.close(), tokensOnly.close()])
    }
  })
})
