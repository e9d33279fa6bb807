/** gzip and brotli by Accept-Encoding: each decodes to the very bytes of the plain answer. */
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueToken, seed, startServer, type TestServer } from './helpers.ts'

let server: TestServer
let f: Awaited<ReturnType<typeof seed>>

beforeAll(async () => {
  server = await startServer({}, { listen: false })
  f = await seed(server.db, server.settings.secretKey)
})
afterAll(async () => {
  await server?.close()
})

describe('compression of the OAuth server', () => {
  it.each(['/openapi.json', '/assets/oauth.css', '/.well-known/openid-configuration'])(
    '%s: gzip and brotli decode to the identical bytes',
    async (url) => {
      const plain = await server.app.inject(url)
      expect(plain.statusCode).toBe(200)
      expect(plain.headers['content-encoding']).toBeUndefined()
      const gzip = await server.app.inject({ url, headers: { 'accept-encoding': 'gzip' } })
      expect(gzip.headers['content-encoding']).toBe('gzip')
      expect(gunzipSync(gzip.rawPayload).equals(plain.rawPayload)).toBe(true)
      const brotli = await server.app.inject({ url, headers: { 'accept-encoding': 'br' } })
      expect(brotli.headers['content-encoding']).toBe('br')
      expect(brotliDecompressSync(brotli.rawPayload).equals(plain.rawPayload)).toBe(true)
    },
  )

  it('an API answer keeps its no-store header when compressed', async () => {
    const { access_token } = await issueToken(server, { applicationId: f.web.id, userId: f.alice.id, scopes: ['api'] })
    const res = await server.app.inject({
      url: '/api/v4/personal_access_tokens',
      headers: { authorization: `Bearer ${access_token}`, 'accept-encoding': 'br' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
  })
})
