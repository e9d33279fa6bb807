/** GET / leads a person somewhere useful, and the browser's icon request is answered. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, startHarness } from './harness.ts'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ listen: true })
})
afterAll(async () => h?.close())

describe('front door', () => {
  it('GET / sends a visitor to the dashboard', async () => {
    const root = await h.app.inject('/')
    expect(root.statusCode).toBe(302)
    expect(root.headers.location).toBe('/dashboard')
    expect((await h.app.inject('/dashboard')).statusCode).toBe(200)
  })

  it('/favicon.ico is the SVG icon, and the dashboard links it', async () => {
    const icon = await h.app.inject('/favicon.ico')
    expect(icon.statusCode).toBe(200)
    expect(icon.headers['content-type']).toBe('image/svg+xml')
    expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
    expect((await h.app.inject('/dashboard')).body).toContain(
      '<link rel="icon" href="/favicon.ico" type="image/svg+xml">',
    )
  })

  it('a path missing its trailing slash, or with one too many, is redirected with 307 as FastAPI does', async () => {
    const key = await h.key(['*'])
    const bare = await h.app.inject('/metadata/meters')
    expect(bare.statusCode).toBe(307)
    expect(bare.headers.location).toBe('/metadata/meters/')
    const extra = await h.app.inject('/data/pv/?aggregation=1%20h')
    expect(extra.statusCode).toBe(307)
    expect(extra.headers.location).toBe('/data/pv?aggregation=1%20h')
    // what a client does with it: follows, its key and query kept
    const followed = await fetch(`${h.base}/metadata/meters`, { headers: { 'x-api-key': key } })
    expect([followed.status, followed.redirected, new URL(followed.url).pathname]).toEqual([
      200,
      true,
      '/metadata/meters/',
    ])
    expect(Array.isArray(await followed.json())).toBe(true)
    const unkeyed = await fetch(`${h.base}/metadata/dataloggers`)
    expect([unkeyed.status, new URL(unkeyed.url).pathname]).toEqual([401, '/metadata/dataloggers/'])
    // only to a route of this service, of the same method, without parameters
    for (const url of ['/metadata/meters/1/', '/nothing', '//example.org/', '//dashboard', '/data/nothing/']) {
      const res = await h.app.inject(url)
      expect([url, res.statusCode, res.headers.location]).toEqual([url, 404, undefined])
    }
    expect((await h.app.inject({ method: 'POST', url: '/metadata/meters' })).statusCode).toBe(404)
  })
})
