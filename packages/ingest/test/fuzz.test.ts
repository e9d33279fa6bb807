import { createApiKey } from '@campus/energy-data/live'
import {
  authorizationValues,
  contentTypeValues,
  fuzzPlan,
  fuzzService,
  requestIdValues,
  secretHeaderValues,
} from '@campus/shared/testing'
import fc from 'fast-check'
import Type from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BASE, type Ingest, ingestDatabase, MINUTE, startIngest } from './support.ts'

// FUZZ_MODE=long (pnpm fuzz): several seeds, 10,000 requests in all
const PLAN = fuzzPlan(20261126)

const { database, writeKey, readKey } = await ingestDatabase()
afterAll(() => database.close())

/**
 * What a rejected request must leave as it was: the keys (their bookkeeping included), the samples
 * and the quarter hours. The quarantine is not in it: keeping what was refused is its purpose.
 */
async function fingerprint(): Promise<string> {
  const { rows } = await database.pool.query<{ digest: string }>(`
    select md5(concat_ws('|',
      (select string_agg(concat_ws(',', id, name, endpoints, expires_at, revoked_at, last_used_at), ';' order by id) from api_keys),
      (select count(*) from meter_samples), (select count(*) from data_15m), (select count(*) from datacenter_1_15m)
    )) as digest`)
  return rows[0]?.digest ?? ''
}

/** SenML packs as a gateway sends them, good and bad: known and unknown meters, units, times, values. */
const pack = fc
  .array(
    fc.record(
      {
        bn: fc.constantFrom('urn:campus:meter:', 'urn:campus:', '', 'x'),
        n: fc.oneof(fc.constantFrom('900', '901', '860', '920', '931', '999', 'urn:campus:meter:900'), fc.string()),
        t: fc.oneof(
          fc.integer({ min: -1e6, max: 1e6 }).map((d) => BASE / 1000 + d),
          fc.double(),
          fc.constant(1e13),
        ),
        u: fc.constantFrom('kW', 'W', 'Wh', 'kWh', 'l', 'm3', 'Cel', 'bogus', ''),
        v: fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constant(1.7e308), fc.string()),
        s: fc.double({ min: 0, max: 1e9, noNaN: true }),
      },
      { requiredKeys: ['n'] },
    ),
    { minLength: 0, maxLength: 12 },
  )
  .map((records) => JSON.stringify(records))

describe('fuzzing the ingest service from its OpenAPI document', () => {
  let ingest: Ingest
  let port: number
  beforeAll(async () => {
    // a limit high enough that 429 does not hide what the route answers
    ingest = await startIngest(database, undefined, { failedAuthLimit: 1_000_000 })
    await ingest.app.listen({ port: 0, host: '127.0.0.1' })
    port = (ingest.app.server.address() as { port: number }).port
  })
  afterAll(() => ingest?.stop())

  for (const fuzzSeed of PLAN.seeds) {
    it(`answers ${PLAN.runs} generated and hostile requests without a 5xx, a leak or a write on rejection (seed ${fuzzSeed})`, async () => {
      const expired = await createApiKey(database.db, {
        name: `old-${fuzzSeed}`,
        endpoints: ['/ingest/*'],
        expiresAt: new Date(Date.now() - MINUTE),
      })
      const keys = [writeKey, readKey, expired.key]
      const report = await fuzzService({
        port,
        document: (await ingest.app.inject('/openapi.json')).json(),
        runs: PLAN.runs,
        seed: fuzzSeed,
        credentials: keys.map((key) => [['x-api-key', key]]),
        headers: {
          'x-api-key': secretHeaderValues(keys, 'edk_'),
          authorization: authorizationValues({ tokens: keys }),
          'content-type': contentTypeValues(),
          'x-request-id': requestIdValues(),
        },
        scenarios: [
          {
            weight: 20,
            request: fc.record({
              method: fc.constant('POST'),
              target: fc.constant('/ingest/senml'),
              headers: fc
                .tuple(fc.constantFrom(...keys), fc.constantFrom('application/senml+json', 'application/json'))
                .map(
                  ([key, type]): Array<[string, string]> => [
                    ['x-api-key', key],
                    ['content-type', type],
                  ],
                ),
              body: fc.oneof(pack, fc.string(), fc.constant('[]'), fc.constant('{}')),
              operation: fc.constant('POST /ingest/senml'),
            }),
          },
        ],
        errorSchema: Type.Object({ detail: Type.Unknown() }) as unknown as Record<string, unknown>,
        skip: (_method, path) => path === '/docs' || path.startsWith('/docs/'),
        snapshot: fingerprint,
      })
      process.stdout.write(
        `ingest fuzz, seed ${fuzzSeed}: ${report.requests} requests, by status ${JSON.stringify(report.byStatus)}\n`,
      )
      expect(report.requests).toBe(PLAN.runs)
      for (const status of ['200', '401', '403', '422']) expect(report.byStatus[status], status).toBeGreaterThan(0)
    })
  }
})
