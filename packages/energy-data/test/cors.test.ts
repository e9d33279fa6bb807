/**
 * CORS of the data API: a dashboard or a Grafana panel elsewhere reads /data/* with its API key
 * (or, later, a bearer token). Origins from ENERGY_CORS_ORIGINS (default any), never credentials.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadEnergyConfig } from '../src/config.ts'
import { dstDays } from './fixtures/dst-days.ts'
import { type Harness, startHarness } from './harness.ts'

const PANEL = 'https://grafana.example.org'

function preflight(h: Harness, url: string, origin: string, headers = 'x-api-key') {
  return h.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': headers },
  })
}

describe('default: any origin, no credentials', () => {
  let h: Harness
  let key: string
  beforeAll(async () => {
    h = await startHarness({ data: dstDays })
    key = await h.key(['/data/*'])
  })
  afterAll(async () => h?.close())

  it.each(['/data/pv', '/data/meters?ids=1', '/metadata/meters/', '/auth/protected', '/chart/acqua'])(
    'preflight of %s allows GET with x-api-key and Authorization',
    async (url) => {
      for (const headers of ['x-api-key', 'authorization', 'x-api-key, authorization']) {
        const res = await preflight(h, url, PANEL, headers)
        expect(res.statusCode, headers).toBe(204)
        expect(res.headers['access-control-allow-origin']).toBe('*')
        expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS')
        expect(res.headers['access-control-allow-headers']).toBe('x-api-key, Authorization')
        expect(res.headers['access-control-allow-credentials']).toBeUndefined()
        expect(res.headers['access-control-max-age']).toBe('7200')
      }
    },
  )

  it('the answer itself names any origin and exposes the file name, the wait and the request id', async () => {
    const res = await h.app.inject({
      url: '/data/pv?start_datetime=2025-03-28 00:00:00&end_datetime=2025-03-28 23:45:00&data_format=csv',
      headers: { origin: PANEL, 'x-api-key': key },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe('*')
    expect(res.headers['access-control-expose-headers']).toBe('Content-Disposition, Retry-After, X-Request-Id, ETag')
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it("/metrics answers no other origin: it is the operator's scraper's, not a page's", async () => {
    const res = await h.app.inject({ url: '/metrics', headers: { origin: PANEL } })
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    expect(
      (await preflight(h, '/metrics', PANEL, 'authorization')).headers['access-control-allow-origin'],
    ).toBeUndefined()
  })
})

describe('ENERGY_CORS_ORIGINS lists the origins allowed', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startHarness({ settings: { corsOrigins: [PANEL, 'http://127.0.0.1:8080'] } })
  })
  afterAll(async () => h?.close())

  it('a listed origin is named back; another gets no CORS header, so its browser refuses the answer', async () => {
    const allowed = await preflight(h, '/data/pv', PANEL)
    expect(allowed.statusCode).toBe(204)
    expect(allowed.headers['access-control-allow-origin']).toBe(PANEL)
    expect(allowed.headers.vary).toContain('Origin')

    const other = await preflight(h, '/data/pv', 'https://evil.example')
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
    const answer = await h.app.inject({ url: '/auth/public', headers: { origin: 'https://evil.example' } })
    expect(answer.statusCode).toBe(200)
    expect(answer.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('a cached view varies by Origin as well as by what it negotiates, so a shared cache keeps them apart', async () => {
    const report = await h.app.inject({ url: '/report/pv', headers: { origin: PANEL } })
    expect(report.headers['access-control-allow-origin']).toBe(PANEL)
    expect(report.headers.vary).toMatch(/Origin/)
    expect(report.headers.vary).toMatch(/Accept/)
  })

  it('the variable is read from the environment, and a value that is not a list of origins is refused', () => {
    expect(loadEnergyConfig({}).ENERGY_CORS_ORIGINS).toBe('*')
    expect(loadEnergyConfig({ ENERGY_CORS_ORIGINS: `${PANEL}, http://127.0.0.1:8080` }).ENERGY_CORS_ORIGINS).toBe(
      `${PANEL}, http://127.0.0.1:8080`,
    )
    for (const bad of [
      'grafana.example.org',
      'https://grafana.example.org/',
      'ftp://x.example',
      '*, https://a.example',
    ]) {
      expect(() => loadEnergyConfig({ ENERGY_CORS_ORIGINS: bad }), bad).toThrow(/ENERGY_CORS_ORIGINS/)
    }
  })
})
