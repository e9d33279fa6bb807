/**
 * The row cap answers before anything is allocated: a window of a century in hourly buckets is
 * 876,600 buckets, far past ENERGY_MAX_ROWS, whatever is stored in it; every aggregation, format,
 * fill and coverage is refused with the same 422 at once, and the process's memory does not move.
 */
import type { TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EnergyDatabase } from '../../src/db/schema.ts'
import { month } from '../fixtures/month.ts'
import { apiKey, type ServerProcess, startEnergyProcess, testDatabase } from '../harness.ts'

const MB = 1024 * 1024

describe('the row cap comes first', () => {
  let database: TestDatabase<EnergyDatabase>
  let server: ServerProcess
  let key: string

  beforeAll(async () => {
    database = await testDatabase(month)
    key = await apiKey(database.db, ['*'], 'row-cap')
    // the service's defaults: ENERGY_MAX_ROWS 500,000, its production heap
    server = await startEnergyProcess({ ENERGY_DATABASE_URL: database.url, ENERGY_RATE_LIMIT_KEY: '100000' })
  })
  afterAll(async () => {
    await server?.stop()
    await database?.close()
  })

  const century = (group: string, query: Record<string, string>) =>
    `/data/${group}?${new URLSearchParams({ start_datetime: '1990-01-01', end_datetime: '2090-01-01', ...query })}`

  const get = async (target: string) => {
    const response = await fetch(`${server.url}${target}`, { headers: { 'x-api-key': key } })
    return { status: response.status, body: await response.text() }
  }

  it('a century of hourly buckets answered whole (fill=null) is 422 too_many_rows by arithmetic, in every format and coverage, the memory unmoved', async () => {
    const before = server.rss()
    let peak = before
    for (const data_format of ['raw', 'csv', 'txt'])
      for (const coverage of ['false', 'true'])
        for (const group of ['weather', 'pv']) {
          const query = { aggregation: '1 h', data_format, coverage, fill: 'null' }
          const { status, body } = await get(century(group, query))
          peak = Math.max(peak, server.rss())
          expect(status, `${group} ${JSON.stringify(query)}: ${body.slice(0, 200)}`).toBe(422)
          const [issue] = (JSON.parse(body) as { detail: Array<{ type: string; msg: string }> }).detail
          expect(issue?.type).toBe('too_many_rows')
          expect(issue?.msg).toMatch(/would return 87660\d rows, more than the 500000 allowed/)
        }
    expect(peak - before).toBeLessThan(64 * MB)
  })

  it('a century of hourly buckets holding a month of data answers that month (coverage too), the memory bounded: no edge of the empty years is made', async () => {
    const before = server.rss()
    let peak = before
    for (const data_format of ['raw', 'csv'])
      for (const coverage of ['false', 'true'])
        for (const aggregation of ['1 h', '1 d', '30 m']) {
          const query = { aggregation, data_format, coverage }
          const { status, body } = await get(century('weather', query))
          peak = Math.max(peak, server.rss())
          expect(status, `${JSON.stringify(query)}: ${body.slice(0, 200)}`).toBe(200)
          if (data_format === 'raw' && aggregation === '1 h') {
            // the month of the fixture, hour by hour (a few hours of it may be unmeasured)
            const rows = JSON.parse(body) as Array<{ coverage?: number }>
            expect(rows.length).toBeGreaterThan(700)
            expect(rows.length).toBeLessThanOrEqual(745)
            if (coverage === 'true') expect(rows.every((r) => typeof r.coverage === 'number')).toBe(true)
          }
        }
    expect((await get('/health/live')).status).toBe(200)
    expect(peak - before).toBeLessThan(96 * MB)
  })
})
