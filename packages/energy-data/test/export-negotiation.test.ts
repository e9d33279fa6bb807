/**
 * Exports as HTTP clients fetch them: gzip and brotli by Accept-Encoding (decoding to the very
 * bytes of the plain answer, streamed exports included), the format chosen by Accept when
 * data_format is absent, and CSV/TXT as attachments with a descriptive file name.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dstDays } from './fixtures/dst-days.ts'
import { type Harness, startHarness } from './harness.ts'

let h: Harness
let key: string

beforeAll(async () => {
  h = await startHarness({ now: () => Date.parse('2025-03-31T12:07:00Z'), data: dstDays })
  key = await h.key(['/data/*'])
})
afterAll(async () => h?.close())

function get(url: string, headers: Record<string, string> = {}) {
  return h.app.inject({ url, headers: { 'x-api-key': key, ...headers } })
}

const DAY = 'start_datetime=2025-03-28 00:00:00&end_datetime=2025-03-28 23:45:00'
// both fixture windows in one request: months apart, so the export streams slice by slice
const SPRING_TO_AUTUMN = 'start_datetime=2025-03-28 00:00:00&end_datetime=2025-10-27 23:45:00'

describe('compression: gzip and brotli decode to the identical bytes', () => {
  it.each([
    ['JSON of one day', `/data/pv?${DAY}`],
    ['CSV of one day', `/data/pv?${DAY}&data_format=csv`],
    ['JSON streamed over seven months', `/data/pv?${SPRING_TO_AUTUMN}`],
    ['CSV streamed over seven months', `/data/meters?ids=1&ids=2&${SPRING_TO_AUTUMN}&data_format=csv`],
  ])('%s', async (_name, url) => {
    const plain = await get(url)
    expect(plain.statusCode).toBe(200)
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(plain.rawPayload.length).toBeGreaterThan(10_000)

    const gzip = await get(url, { 'accept-encoding': 'gzip' })
    expect(gzip.headers['content-encoding']).toBe('gzip')
    expect(gzip.headers.vary).toContain('accept-encoding')
    expect(gunzipSync(gzip.rawPayload).equals(plain.rawPayload)).toBe(true)

    const brotli = await get(url, { 'accept-encoding': 'gzip;q=0.5, br' })
    expect(brotli.headers['content-encoding']).toBe('br')
    expect(brotliDecompressSync(brotli.rawPayload).equals(plain.rawPayload)).toBe(true)
    expect(brotli.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2)
  })

  it('a browser taking both at the same weight gets gzip (smaller and faster here, bench/compression.ts)', async () => {
    const res = await get(`/data/pv?${DAY}`, { 'accept-encoding': 'gzip, deflate, br, zstd' })
    expect(res.headers['content-encoding']).toBe('gzip')
  })

  it('identity, or an encoding not offered, gets the plain answer', async () => {
    for (const accept of ['identity', 'compress', 'gzip;q=0']) {
      const res = await get(`/data/pv?${DAY}`, { 'accept-encoding': accept })
      expect(res.headers['content-encoding'], accept).toBeUndefined()
      expect(res.statusCode).toBe(200)
    }
  })
})

describe('Accept chooses the format when data_format is absent', () => {
  it.each([
    ['text/csv', 'text/csv; charset=utf-8', 'csv'],
    ['text/plain', 'text/plain; charset=utf-8', 'txt'],
    ['text/csv;q=0.5, text/plain', 'text/plain; charset=utf-8', 'txt'],
    ['application/json', 'application/json; charset=utf-8', 'raw'],
    ['*/*', 'application/json; charset=utf-8', 'raw'],
    ['text/html,application/xhtml+xml,*/*;q=0.8', 'application/json; charset=utf-8', 'raw'],
    ['image/png', 'application/json; charset=utf-8', 'raw'],
  ])('Accept: %s -> %s', async (accept, type, format) => {
    const negotiated = await get(`/data/pv?${DAY}`, { accept })
    expect(negotiated.statusCode).toBe(200)
    expect(negotiated.headers['content-type']).toBe(type)
    const explicit = await get(`/data/pv?${DAY}&data_format=${format}`)
    expect(negotiated.body).toBe(explicit.body)
  })

  it('data_format wins over Accept', async () => {
    const res = await get(`/data/pv?${DAY}&data_format=raw`, { accept: 'text/csv' })
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['content-disposition']).toBeUndefined()
  })
})

describe('CSV and TXT are attachments named after what they hold', () => {
  // the bounds are UTC and the days in the name local (Europe/Rome): 23:45 UTC on the 28th is the 29th there
  it.each([
    [`/data/pv?${DAY}&data_format=csv`, 'pv_2025-03-28_2025-03-29_15min.csv'],
    [`/data/pv?${DAY}&data_format=txt&aggregation=1 h`, 'pv_2025-03-28_2025-03-29_1h.txt'],
    [
      '/data/meters?ids=1&start_datetime=2025-03-28 00:00:00&end_datetime=2025-03-31 21:00:00&data_format=csv&aggregation=1 d',
      'meters_2025-03-28_2025-03-31_1d.csv',
    ],
    [
      '/data/pv?start_datetime=2025-03-27T23:00:00Z&end_datetime=2025-03-28T22:45:00Z&aggregation=1 mon&data_format=csv',
      'pv_2025-03-28_2025-03-28_1mon.csv',
    ],
  ])('%s -> %s', async (url, name) => {
    const res = await get(url)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${name}"`)
  })

  it('JSON is not an attachment', async () => {
    expect((await get(`/data/pv?${DAY}`)).headers['content-disposition']).toBeUndefined()
  })
})
