import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dstDays } from './fixtures/dst-days.ts'
import { type Harness, startHarness } from './harness.ts'

let h: Harness
let key: string

beforeAll(async () => {
  h = await startHarness({ data: dstDays })
  key = await h.key(['/metadata/*'])
})
afterAll(async () => h?.close())

const get = (url: string) => h.app.inject({ url, headers: { 'x-api-key': key } })

const METER_FIELDS = [
  'id',
  'description',
  'notes',
  'date_from',
  'date_to',
  'datalogger_id',
  'type_id',
  'unit_id',
  'quantity_id',
].sort()
const DATALOGGER_FIELDS = ['id', 'description', 'notes', 'serial', 'date_from', 'date_to', 'ip'].sort()

describe('/metadata', () => {
  it('/metadata/meters/ lists every meter with every field', async () => {
    const res = await get('/metadata/meters/')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    const meters = res.json() as Array<Record<string, unknown>>
    expect(meters.map((m) => m.id)).toEqual([1, 2, 7])
    for (const m of meters) expect(Object.keys(m).sort()).toEqual(METER_FIELDS)
    expect(meters[0]).toEqual({
      id: 1,
      description: '1) Quadro generale',
      notes: null,
      date_from: '2019-01-01T00:00:00.000Z',
      date_to: null,
      datalogger_id: 'DL-1',
      type_id: 'brick:Electrical_Energy_Sensor',
      unit_id: 'unit:KiloW-HR',
      quantity_id: 'quantitykind:Energy',
    })
  })

  it('/metadata/meters/last is the latest installed', async () => {
    const res = await get('/metadata/meters/last')
    expect(res.statusCode).toBe(200)
    expect((res.json() as { id: number }).id).toBe(2)
  })

  it('/metadata/meters/next is public and proposes the next id', async () => {
    const res = await h.app.inject('/metadata/meters/next')
    expect(res.statusCode).toBe(200)
    const body = res.json() as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(METER_FIELDS)
    expect(body.id).toBe(8)
    expect(body.description).toBe('8) ')
    expect(res.headers['cache-control']).toBe('public, max-age=60')
    const etag = res.headers.etag as string
    expect(etag).toMatch(/^"[\w-]+"$/)
    const again = await h.app.inject({ url: '/metadata/meters/next', headers: { 'if-none-match': etag } })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
  })

  it('/metadata/meters/{uuid}: one meter, 404 when unknown, 422 when not an integer', async () => {
    expect((await get('/metadata/meters/7')).json()).toMatchObject({ id: 7, description: '7) Riserva' })
    const missing = await get('/metadata/meters/999')
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ detail: 'Not Found' })
    const bad = await get('/metadata/meters/abc')
    expect(bad.statusCode).toBe(422)
    expect((bad.json() as { detail: Array<{ loc: unknown[] }> }).detail[0]?.loc).toEqual(['path', 'uuid'])
  })

  it('/metadata/dataloggers/ and /metadata/dataloggers/{uuid}', async () => {
    const list = await get('/metadata/dataloggers/')
    expect(list.statusCode).toBe(200)
    const loggers = list.json() as Array<Record<string, unknown>>
    expect(loggers.map((d) => d.id)).toEqual(['DL-1', 'DL-2'])
    for (const d of loggers) expect(Object.keys(d).sort()).toEqual(DATALOGGER_FIELDS)
    expect((await get('/metadata/dataloggers/DL-2')).json()).toEqual({
      id: 'DL-2',
      description: null,
      notes: 'spare',
      serial: 'SN-2',
      date_from: null,
      date_to: null,
      ip: '10.0.0.2',
    })
    const missing = await get('/metadata/dataloggers/nope')
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ detail: 'Not Found' })
  })

  it('/metadata/meters/last is 404 on an empty estate', async () => {
    const empty = await startHarness()
    try {
      const k = await empty.key(['*'])
      const res = await empty.app.inject({ url: '/metadata/meters/last', headers: { 'x-api-key': k } })
      expect(res.statusCode).toBe(404)
      expect(res.json()).toEqual({ detail: 'Not Found' })
    } finally {
      await empty.close()
    }
  })
})

describe('/openapi.json', () => {
  it('describes the API key scheme, tags and every data route', async () => {
    const doc = (await h.app.inject('/openapi.json')).json() as {
      info: { title: string; version: string; license: { name: string } }
      components: { securitySchemes: Record<string, unknown> }
      tags: Array<{ name: string }>
      paths: Record<
        string,
        { get: { security?: unknown; parameters?: Array<{ name: string; schema: { enum?: string[] } }> } }
      >
    }
    expect(doc.info).toMatchObject({ title: 'data API', version: '1.0.3', license: { name: 'Apache 2.0' } })
    expect(doc.components.securitySchemes.APIKeyHeader).toEqual({ type: 'apiKey', in: 'header', name: 'x-api-key' })
    expect(doc.tags.map((t) => t.name)).toEqual(['Metadata', 'Data', 'Report', 'Chart', 'Alerts', 'Developers'])
    for (const path of [
      '/data/pv',
      '/data/meters',
      '/metadata/meters/',
      '/metadata/meters/{uuid}',
      '/auth/protected',
    ]) {
      expect(doc.paths[path]?.get.security).toEqual([{ APIKeyHeader: [] }])
    }
    expect(doc.paths['/metadata/meters/next']?.get.security).toEqual([])
    const aggregation = doc.paths['/data/pv']?.get.parameters?.find((p) => p.name === 'aggregation')
    expect(aggregation?.schema.enum).toEqual(['15 m', '30 m', '1 h', '1 d', '1 w', '1 mon'])
    const frigo = doc.paths['/data/centrali_frigo']?.get.parameters?.find((p) => p.name === 'aggregation')
    expect(frigo?.schema.enum).toEqual(['15 m'])
  })
})
