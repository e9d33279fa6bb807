/** GET / leads a person somewhere useful, and the browser's icon request is answered. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from './helpers.ts'

let server: TestServer

beforeAll(async () => {
  server = await startServer({}, { listen: false })
})
afterAll(async () => {
  await server?.close()
})

describe('front door', () => {
  it('GET / sends a visitor to the applications page, which sends the signed-out to sign in and back', async () => {
    const root = await server.app.inject('/')
    expect(root.statusCode).toBe(302)
    expect(root.headers.location).toBe('/profile/applications')
    const page = await server.app.inject('/profile/applications')
    expect(page.statusCode).toBe(302)
    expect(page.headers.location).toMatch(/^\/users\/sign_in\?return_to=%2Fprofile%2Fapplications/)
  })

  it('/favicon.ico is the SVG icon, and every page links it', async () => {
    const icon = await server.app.inject('/favicon.ico')
    expect(icon.statusCode).toBe(200)
    expect(icon.headers['content-type']).toBe('image/svg+xml')
    expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
    const signIn = await server.app.inject('/users/sign_in')
    expect(signIn.body).toContain('<link rel="icon" href="/favicon.ico" type="image/svg+xml">')
  })
})
