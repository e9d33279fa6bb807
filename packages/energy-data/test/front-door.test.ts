/** GET / leads a person somewhere useful, and the browser's icon request is answered. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, startHarness } from './harness.ts'

let h: Harness

beforeAll(async () => {
  h = await startHarness()
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
})
