import { get as httpGet } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GROUP_COLUMNS, GROUP_NAMES } from '../src/catalogue/groups.ts'
import { dstDays, FIXTURE_TIMES, GAP, meterRows, pvValue } from './fixtures/dst-days.ts'
import { type Harness, startHarness } from './harness.ts'
import { local, QUARTER, ROME, served } from './support.ts'

let h: Harness
let key: string

beforeAll(async () => {
  h = await startHarness({ now: () => Date.parse('2025-03-31T12:07:00Z'), data: dstDays })
  key = await h.key(['/data/*'])
})
afterAll(async () => h?.close())

async function get(url: string) {
  return h.app.inject({ url, headers: { 'x-api-key': key } })
}

type Row = Record<string, unknown>

const mean = (values: Array<number | null>) => {
  const present = values.filter((v): v is number => v !== null)
  return present.length ? present.reduce((a, b) => a + b, 0) / present.length : null
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>()
  for (const item of items) {
    const k = keyOf(item)
    const list = out.get(k)
    if (list) list.push(item)
    else out.set(k, [item])
  }
  return out
}

function expectClose(actual: unknown, expected: number | null) {
  if (expected === null) expect(actual).toBeNull()
  else expect(actual as number).toBeCloseTo(expected, 9)
}

describe('/data/pv', () => {
  it('returns the stored quarter hours of an inclusive window with offsets of the zone', async () => {
    const res = await get('/data/pv?start_datetime=2025-03-30%2000:00:00&end_datetime=2025-03-30%2001:00:00')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    const rows = res.json() as Row[]
    expect(rows.map((r) => r.time_15m)).toEqual([
      '2025-03-30T01:00:00+01:00',
      '2025-03-30T01:15:00+01:00',
      '2025-03-30T01:30:00+01:00',
      '2025-03-30T01:45:00+01:00',
      '2025-03-30T03:00:00+02:00',
    ])
    expect(Object.keys(rows[0] as Row)).toEqual(['time_15m', ...GROUP_COLUMNS.pv])
    const t = Date.parse('2025-03-30T00:00:00Z')
    GROUP_COLUMNS.pv.forEach((c, i) => {
      expect((rows[0] as Row)[c]).toBe(pvValue(t, i))
    })
  })

  it('daily means follow local days in Europe/Rome: 92 and 100 quarter hours on the DST days', async () => {
    for (const [from, to, day, quartersInDay] of [
      ['2025-03-29', '2025-03-31', '2025-03-30', 92],
      ['2025-10-25', '2025-10-27', '2025-10-26', 100],
    ] as const) {
      const res = await get(`/data/pv?aggregation=1%20d&start_datetime=${from}T12:00:00&end_datetime=${to}T00:00:00`)
      expect(res.statusCode).toBe(200)
      const rows = res.json() as Row[]
      const stored = FIXTURE_TIMES.filter((t) => !(t >= GAP.from && t < GAP.to))
      const byDay = groupBy(stored, (t) => local(t, ROME).date)
      const days = [...byDay.keys()].filter((d) => d >= from && d <= to.slice(0, 10))
      expect(rows.map((r) => (r.time_15m as string).slice(0, 10))).toEqual(days)
      expect(byDay.get(day)?.length).toBe(quartersInDay)
      for (const row of rows) {
        const date = (row.time_15m as string).slice(0, 10)
        const times = byDay.get(date) ?? []
        // the bucket starts at local midnight
        expect(Date.parse(row.time_15m as string)).toBe(Math.min(...times))
        GROUP_COLUMNS.pv.forEach((c, i) => {
          expectClose(row[c], mean(times.map((t) => pvValue(t, i))))
        })
      }
    }
  })

  it('weekly buckets start on local Mondays and monthly ones on local first days', async () => {
    const stored = FIXTURE_TIMES.filter((t) => !(t >= GAP.from && t < GAP.to) && t < Date.parse('2025-04-15T00:00:00Z'))
    const mondayOf = (date: string) => {
      const d = new Date(`${date}T00:00:00Z`)
      d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7))
      return d.toISOString().slice(0, 10)
    }
    for (const [aggregation, keyOf, expected] of [
      [
        '1%20w',
        (t: number) => mondayOf(local(t, ROME).date),
        ['2025-03-24T00:00:00+01:00', '2025-03-31T00:00:00+02:00'],
      ],
      [
        '1%20mon',
        (t: number) => `${local(t, ROME).date.slice(0, 7)}-01`,
        ['2025-03-01T00:00:00+01:00', '2025-04-01T00:00:00+02:00'],
      ],
    ] as const) {
      const res = await get(`/data/pv?aggregation=${aggregation}&start_datetime=2025-03-28&end_datetime=2025-04-10`)
      const rows = res.json() as Row[]
      expect(rows.map((r) => r.time_15m)).toEqual(expected)
      const groups = groupBy(stored, keyOf)
      for (const row of rows) {
        const times = groups.get((row.time_15m as string).slice(0, 10)) ?? []
        expect(times.length).toBeGreaterThan(0)
        GROUP_COLUMNS.pv.forEach((c, i) => {
          expectClose(row[c], mean(times.map((t) => pvValue(t, i))))
        })
      }
    }
  })

  it('hourly means skip the gap: no row for an hour without data', async () => {
    const res = await get(
      '/data/pv?aggregation=1%20h&start_datetime=2025-03-29%2008:00:00&end_datetime=2025-03-29%2013:59:00',
    )
    const rows = res.json() as Row[]
    expect(rows.map((r) => r.time_15m)).toEqual([
      '2025-03-29T09:00:00+01:00',
      '2025-03-29T10:00:00+01:00',
      '2025-03-29T13:00:00+01:00',
      '2025-03-29T14:00:00+01:00',
    ])
    for (const row of rows) {
      const start = Date.parse(row.time_15m as string)
      const times = [0, 1, 2, 3].map((k) => start + k * QUARTER)
      GROUP_COLUMNS.pv.forEach((c, i) => {
        expectClose(row[c], mean(times.map((t) => pvValue(t, i))))
      })
    }
  })

  it('CSV and TXT carry the same values as JSON', async () => {
    const window = 'aggregation=30%20m&start_datetime=2025-10-25T22:00:00Z&end_datetime=2025-10-26T03:00:00Z'
    const json = (await get(`/data/pv?${window}`)).json() as Row[]
    const csv = await get(`/data/pv?${window}&data_format=csv`)
    const txt = await get(`/data/pv?${window}&data_format=txt`)
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(txt.headers['content-type']).toBe('text/plain; charset=utf-8')
    for (const [text, separator, eol] of [
      [csv.body, ',', '\r\n'],
      [txt.body, '\t', '\n'],
    ] as const) {
      const lines = text.split(eol).filter(Boolean)
      const header = (lines[0] as string).split(separator)
      expect(header).toEqual(['time_15m', ...GROUP_COLUMNS.pv])
      const parsed = lines.slice(1).map((line) => {
        const cells = line.split(separator)
        return Object.fromEntries(
          header.map((name, i) => [name, i === 0 ? cells[i] : cells[i] === '' ? null : Number(cells[i])]),
        )
      })
      expect(parsed).toEqual(json)
    }
    // 22:00Z to 03:00Z inclusive; the repeated local hour 02:00-03:00 keeps its own half hours
    expect(json.map((r) => r.time_15m)).toContain('2025-10-26T02:30:00+01:00')
    expect(json.map((r) => r.time_15m)).toContain('2025-10-26T02:30:00+02:00')
    expect(json.length).toBe(11)
  })

  it('defaults to the last day up to the current quarter hour', async () => {
    const rows = (await get('/data/pv')).json() as Row[]
    expect(rows.at(-1)?.time_15m).toBe('2025-03-31T14:00:00+02:00')
    expect(rows[0]?.time_15m).toBe('2025-03-30T14:00:00+02:00')
    expect(rows.length).toBe(97)
  })

  it('timezone=UTC moves day buckets to UTC midnight and offsets to +00:00', async () => {
    const rows = (
      await get('/data/pv?aggregation=1%20d&start_datetime=2025-03-30&end_datetime=2025-03-30&timezone=UTC')
    ).json() as Row[]
    expect(rows.map((r) => r.time_15m)).toEqual(['2025-03-30T00:00:00+00:00'])
  })

  it('serves every group with its own field list', async () => {
    for (const group of GROUP_NAMES) {
      const res = await get(`/data/${group}?start_datetime=2025-03-30&end_datetime=2025-03-30&data_format=csv`)
      expect(res.statusCode).toBe(200)
      expect(res.body.split('\r\n')[0]).toBe(['time_15m', ...GROUP_COLUMNS[group]].join(','))
    }
  })
})

describe('/data/meters', () => {
  const rows = meterRows()

  it('combines min/max/sum/count correctly per local day and tags a mixed bucket', async () => {
    const res = await get(
      '/data/meters?ids=1&ids=2&tag=ok&tag=estimated&aggregation=1%20d&start_datetime=2025-03-30&end_datetime=2025-03-30',
    )
    expect(res.statusCode).toBe(200)
    const body = res.json() as Row[]
    expect(body.map((r) => [r.time_15m, r.meter_id])).toEqual([
      ['2025-03-30T00:00:00+01:00', 1],
      ['2025-03-30T00:00:00+01:00', 2],
    ])
    for (const row of body) {
      const source = rows.filter(
        (r) => r.meter === row.meter_id && local(r.time, ROME).date === '2025-03-30' && r.tag !== 'suspect',
      )
      expect(source.length).toBeLessThanOrEqual(92)
      const count = source.reduce((a, r) => a + (r.count ?? 0), 0)
      const sum = source.reduce((a, r) => a + (r.sum ?? 0), 0)
      expect(row.count_value).toBe(count)
      expectClose(row.sum_value, sum)
      // each quarter hour weighs its 15 minutes, whatever number of samples it took
      expectClose(row.avg_value, source.reduce((a, r) => a + (r.avg as number), 0) / source.length)
      expectClose(row.min_value, Math.min(...source.map((r) => r.min as number)))
      expectClose(row.max_value, Math.max(...source.map((r) => r.max as number)))
      expect(row.tag).toBe('mixed')
      expect(Object.keys(row)).toEqual([
        'time_15m',
        'meter_id',
        'avg_value',
        'min_value',
        'max_value',
        'sum_value',
        'count_value',
        'tag',
      ])
    }
  })

  it('gives the exact total of a bucket with totals=true: the sum of its quarter-hour values', async () => {
    const url =
      '/data/meters?ids=1&ids=2&tag=ok&tag=estimated&aggregation=1%20d&start_datetime=2025-03-29&end_datetime=2025-03-30'
    const body = (await get(`${url}&totals=true&coverage=true`)).json() as Row[]
    expect(body.length).toBeGreaterThan(0)
    for (const row of body) {
      const day = (row.time_15m as string).slice(0, 10)
      const source = rows.filter(
        (r) => r.meter === row.meter_id && local(r.time, ROME).date === day && r.tag !== 'suspect',
      )
      expectClose(
        row.total_value,
        source.reduce((a, r) => a + (r.avg as number), 0),
      )
      expect(Object.keys(row).slice(-2)).toEqual(['total_value', 'coverage'])
    }
    // asked for nothing, the contract's shape
    expect(Object.keys((await get(url)).json()[0] as Row)).not.toContain('total_value')
  })

  it('counts 92 and 100 quarter hours on the DST days', async () => {
    for (const [day, expected] of [
      ['2025-03-30', 92],
      ['2025-10-26', 100],
    ] as const) {
      const res = await get(
        `/data/meters?ids=1&${['ok', 'estimated', 'suspect'].map((t) => `tag=${t}`).join('&')}&start_datetime=${day}&end_datetime=${day}T12:00:00Z&data_format=csv`,
      )
      const lines = res.body.split('\r\n').filter(Boolean).slice(1)
      const quartersOfDay = lines.filter((l) => l.startsWith(day))
      expect(quartersOfDay.length).toBeGreaterThan(0)
      const daily = (
        await get(
          `/data/meters?ids=1&tag=ok&tag=estimated&tag=suspect&aggregation=1%20d&start_datetime=${day}&end_datetime=${day}`,
        )
      ).json() as Row[]
      const source = rows.filter((r) => r.meter === 1 && local(r.time, ROME).date === day)
      expect(source.length).toBe(expected)
      expect(daily[0]?.count_value).toBe(source.reduce((a, r) => a + (r.count ?? 0), 0))
    }
  })

  it('keeps only the requested tags and defaults to ok', async () => {
    const body = (
      await get('/data/meters?ids=1&start_datetime=2025-03-30&end_datetime=2025-03-30T23:59:59Z')
    ).json() as Row[]
    expect(body.length).toBeGreaterThan(0)
    expect(new Set(body.map((r) => r.tag))).toEqual(new Set(['ok']))
    const expected = rows.filter(
      (r) =>
        r.meter === 1 &&
        r.tag === 'ok' &&
        r.time >= Date.parse('2025-03-30T00:00:00Z') &&
        r.time <= Date.parse('2025-03-30T23:45:00Z'),
    )
    expect(body.length).toBe(expected.length)
  })

  it('defaults ids to the lowest meter id', async () => {
    const body = (await get('/data/meters?start_datetime=2025-03-30&end_datetime=2025-03-30T01:00:00Z')).json() as Row[]
    expect(new Set(body.map((r) => r.meter_id))).toEqual(new Set([1]))
  })

  it('CSV parses back to the JSON values', async () => {
    const q = 'ids=1&ids=2&aggregation=1%20h&start_datetime=2025-10-26T00:00:00Z&end_datetime=2025-10-26T03:00:00Z'
    const json = (await get(`/data/meters?${q}`)).json() as Row[]
    const csv = (await get(`/data/meters?${q}&data_format=csv`)).body
    const [head, ...lines] = csv.split('\r\n').filter(Boolean)
    const names = (head as string).split(',')
    const parsed = lines.map((l) => {
      const cells = l.split(',')
      return Object.fromEntries(
        names.map((n, i) => [
          n,
          n === 'time_15m' || n === 'tag' ? cells[i] : cells[i] === '' ? null : Number(cells[i]),
        ]),
      )
    })
    expect(parsed).toEqual(json)
  })

  it('serves numbers to 12 significant digits: the binary noise of sums and means is not written', async () => {
    const q =
      'ids=1&ids=2&aggregation=1%20d&start_datetime=2025-03-28&end_datetime=2025-03-31&totals=true&coverage=true'
    const significant = (text: string) => text.replace(/^-?0*\.?0*/, '').replace(/[.]|e.*$/gi, '').length
    for (const format of ['raw', 'csv', 'txt']) {
      const body = (await get(`/data/meters?${q}&data_format=${format}`)).body
      const numbers = body.replace(/\d{4}-\d\d-\d\dT[\d:]+[+-]\d\d:\d\d/g, '').match(/-?\d+(?:\.\d+)?(?:e[+-]?\d+)?/gi)
      expect(numbers?.length, format).toBeGreaterThan(20)
      expect(
        numbers?.filter((n) => significant(n) > 15),
        format,
      ).toEqual([])
    }
    // and each is the recomputation to those digits: a day's share of measured quarter hours (tag ok)
    const days = (await get(`/data/meters?${q}`)).json() as Row[]
    const covered = days.find((r) => r.meter_id === 1 && (r.time_15m as string).startsWith('2025-03-28'))
    const own = rows.filter((r) => r.meter === 1 && r.tag === 'ok' && local(r.time, ROME).date === '2025-03-28')
    expect(covered?.coverage).toBe(served(own.length / 96))
  })
})

describe('bad input', () => {
  const cases: Array<[string, unknown[], string]> = [
    ['/data/pv?start_datetime=yesterday', ['query', 'start_datetime'], 'datetime_parsing'],
    ['/data/pv?end_datetime=2025-02-30', ['query', 'end_datetime'], 'datetime_parsing'],
    ['/data/pv?start_datetime=2025-03-02&end_datetime=2025-03-01', ['query', 'end_datetime'], 'value_error'],
    ['/data/pv?aggregation=5%20m', ['query', 'aggregation'], 'enum'],
    ['/data/pv?data_format=xml', ['query', 'data_format'], 'enum'],
    ['/data/pv?timezone=Mars/Olympus', ['query', 'timezone'], 'value_error'],
    ['/data/meters?tag=great', ['query', 'tag', 0], 'enum'],
    ['/data/meters?ids=abc', ['query', 'ids', 0], 'integer_type'],
    ['/data/meters?ids=99', ['query', 'ids'], 'value_error'],
    ['/data/centrali_frigo?aggregation=1%20h', ['query', 'aggregation'], 'enum'],
  ]
  for (const [url, loc, type] of cases) {
    it(`${url} -> 422 ${type}`, async () => {
      const res = await get(url)
      expect(res.statusCode).toBe(422)
      const body = res.json() as { detail: Array<{ loc: unknown[]; msg: string; type: string }> }
      expect(body.detail).toContainEqual(expect.objectContaining({ loc, type }))
      for (const issue of body.detail) expect(typeof issue.msg).toBe('string')
    })
  }

  it('one zone authority: a zone Node knows and the database does not is 422, never 500; the names both know work', async () => {
    // US/Pacific-New and Canada/East-Saskatchewan left the tz database; Node still knows them
    for (const zone of ['US/Pacific-New', 'Canada/East-Saskatchewan']) {
      for (const path of ['/data/water', '/data/meters?ids=860&', '/report/water']) {
        const url = `${path}${path.endsWith('&') ? '' : '?'}aggregation=1%20d&timezone=${encodeURIComponent(zone)}&start_datetime=2025-03-29&end_datetime=2025-03-31`
        const res = await get(url.replace('/report/water?aggregation=1%20d&', '/report/water?'))
        expect([url, res.statusCode]).toEqual([url, 422])
        expect(res.json().detail).toContainEqual(expect.objectContaining({ loc: ['query', 'timezone'] }))
      }
    }
    for (const zone of ['GMT', 'EST5EDT', 'europe/rome']) {
      const res = await get(
        `/data/water?aggregation=1%20d&timezone=${zone}&start_datetime=2025-03-29&end_datetime=2025-03-31`,
      )
      expect([zone, res.statusCode]).toEqual([zone, 200])
    }
  })

  it('an unknown path is 404 {"detail":"Not Found"}', async () => {
    const res = await get('/data/solar')
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ detail: 'Not Found' })
  })
})

describe('row cap', () => {
  let small: Harness
  let smallKey: string
  beforeAll(async () => {
    small = await startHarness({ settings: { maxRows: 100 }, data: dstDays })
    smallKey = await small.key(['*'])
  })
  afterAll(async () => small?.close())

  it('answers 422 before sending anything when the window holds more rows than allowed', async () => {
    const res = await small.app.inject({
      url: '/data/pv?start_datetime=2025-03-28&end_datetime=2025-03-31',
      headers: { 'x-api-key': smallKey },
    })
    expect(res.statusCode).toBe(422)
    const detail = (res.json() as { detail: Array<{ loc: unknown[]; msg: string; type: string }> }).detail
    expect(detail[0]?.type).toBe('too_many_rows')
    expect(detail[0]?.msg).toMatch(/more than the 100 allowed: narrow start_datetime\/end_datetime/)
  })

  it('serves a coarser view of the same window', async () => {
    const res = await small.app.inject({
      url: '/data/pv?aggregation=1%20h&start_datetime=2025-03-29&end_datetime=2025-03-30T12:00:00Z',
      headers: { 'x-api-key': smallKey },
    })
    expect(res.statusCode).toBe(200)
    expect((res.json() as Row[]).length).toBe(37 - 2) // 37 hours less the two of the gap
  })

  it('counts exactly when the estimate is over the cap but the rows are not', async () => {
    // 121 quarter hours in the window, 96 stored (the fixture ends at midnight)
    const res = await small.app.inject({
      url: '/data/pv?start_datetime=2025-03-31T00:00:00Z&end_datetime=2025-04-01T06:00:00Z',
      headers: { 'x-api-key': smallKey },
    })
    expect(res.statusCode).toBe(200)
    expect((res.json() as Row[]).length).toBe(96)
  })
})

describe('streaming', () => {
  it('sends a long window in pieces and survives a client that leaves halfway', async () => {
    const address = await h.app.listen({ port: 0, host: '127.0.0.1' })
    {
      const url = `${address}/data/meters?ids=1&ids=2&tag=ok&tag=estimated&tag=suspect&start_datetime=2025-03-28&end_datetime=2025-10-28&data_format=csv`
      const response = await fetch(url, { headers: { 'x-api-key': key, connection: 'close' } })
      expect(response.status).toBe(200)
      expect(response.headers.get('transfer-encoding')).toBe('chunked')
      let pieces = 0
      let text = ''
      const decoder = new TextDecoder()
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        pieces++
        text += decoder.decode(chunk, { stream: true })
      }
      expect(pieces).toBeGreaterThan(1)
      expect(text.split('\r\n').filter(Boolean).length - 1).toBe(meterRows().length)

      // a client that reads one piece and hangs up
      await new Promise<void>((resolve, reject) => {
        const request = httpGet(url, { headers: { 'x-api-key': key }, agent: false }, (response) => {
          response.once('data', () => {
            request.destroy()
            resolve()
          })
        })
        request.on('error', (error) =>
          (error as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve() : reject(error),
        )
      })
      // the service goes on answering, with every pooled connection back
      const after = await fetch(`${address}/data/pv?start_datetime=2025-03-30&end_datetime=2025-03-30`, {
        headers: { 'x-api-key': key, connection: 'close' },
      })
      expect(after.status).toBe(200)
      expect(((await after.json()) as unknown[]).length).toBe(1)
      const pool = h.database.pool
      for (let i = 0; i < 50 && pool.idleCount < pool.totalCount; i++) await new Promise((r) => setTimeout(r, 20))
      expect(pool.idleCount).toBe(pool.totalCount)
      expect(pool.waitingCount).toBe(0)
    }
  })
})

describe('HEAD', () => {
  it('answers a data endpoint with headers only', async () => {
    const res = await h.app.inject({
      method: 'HEAD',
      url: '/data/pv?start_datetime=2025-03-28&end_datetime=2025-03-31&data_format=csv',
      headers: { 'x-api-key': key },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(res.body).toBe('')
  })
})
