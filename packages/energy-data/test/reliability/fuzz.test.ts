import {
  acceptValues,
  authorizationValues,
  contentTypeValues,
  forwardedForValues,
  forwardedValues,
  fuzzPlan,
  fuzzService,
  ifNoneMatchValues,
  requestIdValues,
  secretHeaderValues,
} from '@campus/shared/testing'
import { sql } from 'kysely'
import Type from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { API_KEY_PREFIX } from '../../src/domain/api-keys.ts'
import { createApiKey } from '../../src/repositories/api-keys.ts'
import { DetailResponse, HTTPValidationError } from '../../src/schemas/errors.ts'
import { type Harness, seeded, startHarness } from '../harness.ts'

// FUZZ_MODE=long (pnpm fuzz): several seeds, 10,000 requests in all
const PLAN = fuzzPlan(20251122)
const RUNS = PLAN.runs
const NOW = Date.parse('2025-03-31T12:00:00Z')

/** Every table's content, digested; api_keys.last_used_at included (only accepted requests may write it). */
async function fingerprint(h: Harness): Promise<string> {
  const result = await sql<{ digest: string }>`
    select md5(concat_ws('|',
      (select string_agg(concat_ws(',', id, name, endpoints, expires_at, revoked_at, last_used_at), ';' order by id) from api_keys),
      (select count(*) from meters), (select count(*) from dataloggers),
      (select count(*) from data_15m), (select count(*) from pv_15m), (select count(*) from weather_15m)
    )) as digest`.execute(h.db)
  return result.rows[0]?.digest ?? ''
}

describe('fuzzing the data API from its OpenAPI document', () => {
  let h: Harness
  const credentials: Array<Array<[string, string]>> = []

  beforeAll(async () => {
    // limits high enough that 429 does not hide what the routes answer
    h = await startHarness({
      data: seeded({ from: '2025-03-29', to: '2025-04-01', seed: '5' }),
      settings: { rateLimitKey: 1_000_000, rateLimitPublic: 1_000_000, rateLimitFailedAuth: 1_000_000 },
      now: () => NOW,
      listen: true,
    })
    const all = await createApiKey(h.db, { name: 'all', endpoints: ['*'] })
    const metadata = await createApiKey(h.db, { name: 'metadata', endpoints: ['/metadata/*'] })
    const expired = await createApiKey(h.db, { name: 'old', endpoints: ['*'], expiresAt: new Date(NOW - 86_400_000) })
    for (const { key } of [all, metadata, expired]) credentials.push([['x-api-key', key]])
  })
  afterAll(async () => h?.close())

  for (const fuzzSeed of PLAN.seeds) {
    it(`answers ${RUNS} generated and hostile requests without a 5xx, a leak or a write on rejection (seed ${fuzzSeed})`, async () => {
      const document = (await h.app.inject('/openapi.json')).json()
      const keys = credentials.map((pairs) => pairs[0]?.[1] as string)
      const report = await fuzzService({
        port: Number(new URL(h.base).port),
        document,
        runs: RUNS,
        seed: fuzzSeed,
        credentials,
        // every header the service reads
        headers: {
          'x-api-key': secretHeaderValues(keys, API_KEY_PREFIX),
          accept: acceptValues(),
          'if-none-match': ifNoneMatchValues(),
          'x-request-id': requestIdValues(),
          'content-type': contentTypeValues(),
          authorization: authorizationValues({ tokens: keys }),
          'x-forwarded-for': forwardedForValues(),
          forwarded: forwardedValues(),
        },
        errorSchema: Type.Union([DetailResponse, HTTPValidationError]) as unknown as Record<string, unknown>,
        // an event stream never completes: its guards are fuzzed through every other route
        skip: (_method, path) => path === '/docs' || path.startsWith('/docs/') || path.endsWith('/stream'),
        snapshot: () => fingerprint(h),
      })
      process.stdout.write(
        `energy fuzz, seed ${fuzzSeed}: ${report.requests} requests, by status ${JSON.stringify(report.byStatus)}\n`,
      )
      expect(report.requests).toBe(RUNS)
      expect(report.byStatus['200']).toBeGreaterThan(RUNS / 20)
      expect(report.byStatus['401']).toBeGreaterThan(0)
      expect(report.byStatus['403']).toBeGreaterThan(0)
      expect(report.byStatus['422']).toBeGreaterThan(0)
    })
  }

  it('declares every guard and validation answer a route can give in its response schemas', async () => {
    const document = (await h.app.inject('/openapi.json')).json()
    const missing: string[] = []
    for (const [path, item] of Object.entries<Record<string, OpenApiOperation>>(document.paths)) {
      if (/^\/(health|docs|openapi)/.test(path)) continue
      for (const [method, operation] of Object.entries(item)) {
        const declared = Object.keys(operation.responses ?? {})
        const expected = ['429']
        if (operation.security?.length) expected.push('401', '403')
        if (operation.parameters?.some((p) => (p.in === 'query' || p.in === 'path') && constrained(p.schema)))
          expected.push('422')
        if (operation.parameters?.some((p) => p.in === 'path')) expected.push('404')
        for (const status of expected) if (!declared.includes(status)) missing.push(`${method} ${path} ${status}`)
      }
    }
    expect(missing).toEqual([])
  })
})

interface OpenApiOperation {
  responses?: Record<string, unknown>
  security?: unknown[]
  parameters?: Array<{ in: string; schema?: Record<string, unknown> }>
}

/** Whether a value can fail a parameter's schema (anything but a bare string can). */
const constrained = (schema: Record<string, unknown> = {}) =>
  schema.type !== 'string' || Object.keys(schema).some((k) => !['type', 'examples', 'description'].includes(k))
