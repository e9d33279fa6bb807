import {
  accessTokenOf,
  authenticate,
  authenticateBearer,
  DetailError,
  type EnergyDatabase,
  energyErrors,
  failedAuthentications,
  inTransaction,
  RateLimitedResponse,
  resourceProofs,
  type TokenIntrospector,
  takeMessages,
  touchApiKey,
  unauthorized,
  WRITE_ENERGY,
  writeAllowed,
} from '@campus/energy-data/live'
import type { DpopProofs } from '@campus/shared'
import { createAttemptCounter, type Database, readMigrations, registerPlatform, serverOptions } from '@campus/shared'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import Type from 'typebox'
import { quarantineWhole, unavailable } from './failures.ts'
import type { IngestMetrics } from './metrics.ts'
import { ingestService } from './service.ts'

export interface IngestAppOptions {
  database: Database<EnergyDatabase>
  metrics: IngestMetrics
  logLevel?: string
  maxFutureMs: number
  maxBodyBytes: number
  /** Introspects the OAuth server's access tokens; absent: API keys only. */
  tokens?: TokenIntrospector | undefined
  /** Failed authentications a minute per address before 429 (INGEST_RATE_LIMIT_FAILED_AUTH). */
  failedAuthLimit?: number
  /** Redis for the failure counters and the DPoP proofs' used jti (across instances); absent: this process's memory. */
  redisUrl?: string | undefined
  /** Key of the DPoP nonces asked of proofs (ENERGY_DPOP_NONCE_SECRET); absent: none. */
  dpopNonceKey?: Buffer | undefined
}

const SENML_TYPES = ['application/senml+json', 'application/json']

const Detail = Type.Object({ detail: Type.String() }, { title: 'Error' })
const Refusal = Type.Object({
  index: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Record index in the pack; null: the whole payload',
  }),
  code: Type.String(),
  reason: Type.String(),
})
const Taken = Type.Object(
  {
    samples: Type.Integer({ description: 'Samples stored' }),
    duplicates: Type.Integer({ description: 'Samples already stored (same meter and instant), counted once' }),
    quarantined: Type.Integer({ description: 'Records put in the quarantine (listed in `refused`)' }),
    refused: Type.Array(Refusal),
  },
  { title: 'Taken' },
)

/**
 * The credential of a write, named for the quarantine's `source`: an `x-api-key` valid and with a
 * pattern under /ingest/ covering the path, or an OAuth access token with the write_energy scope
 * (checked as the data API checks its credentials).
 */
async function authorize(
  request: FastifyRequest,
  database: Database<EnergyDatabase>,
  tokens: TokenIntrospector | undefined,
  proofs: DpopProofs,
  throttle: ReturnType<typeof failedAuthentications>,
): Promise<{ name: string; keyId?: number }> {
  throttle.check(request.ip)
  try {
    return await identify(request, database, tokens, proofs)
  } catch (error) {
    await throttle.failed(request.ip, error)
    throw error
  }
}

async function identify(
  request: FastifyRequest,
  database: Database<EnergyDatabase>,
  tokens: TokenIntrospector | undefined,
  proofs: DpopProofs,
): Promise<{ name: string; keyId?: number }> {
  const header = request.headers['x-api-key']
  const key = typeof header === 'string' ? header.trim() : ''
  const bearer = accessTokenOf(request.headers.authorization)
  if (!key && bearer) {
    // a DPoP-bound token comes with a proof for this URL as the gateway addressed it (RFC 9449 7.1)
    const url = `${request.protocol}://${request.host}${request.url.split('?')[0] ?? ''}`
    const dpop = bearer.dpop ? { proof: request.headers.dpop, method: request.method, url } : undefined
    const token = await authenticateBearer(tokens, { value: bearer.value, dpop }, proofs)
    if (!token.scopes.includes(WRITE_ENERGY)) throw new DetailError(403, `The token lacks the ${WRITE_ENERGY} scope`)
    return { name: `oauth:${token.clientId ?? '-'}` }
  }
  if (!key) throw unauthorized('Missing API key (x-api-key) or access token (Authorization: Bearer)')
  const record = await authenticate(database.db, key)
  if (!writeAllowed(record.endpoints, request.url.split('?')[0] ?? '')) {
    throw new DetailError(403, 'This API key may not write: it needs an endpoint pattern under /ingest/')
  }
  return { name: `key:${record.name}`, keyId: record.id }
}

/** The ingest service's HTTP side: POST /ingest/senml for gateways without MQTT, probes, metrics, OpenAPI. */
export async function buildIngestApp(options: IngestAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...serverOptions('ingest', options.logLevel ?? 'silent', energyErrors),
    bodyLimit: options.maxBodyBytes,
  }).withTypeProvider<TypeBoxTypeProvider>()
  await registerPlatform(app, {
    service: 'ingest',
    errors: energyErrors,
    db: options.database.db,
    migrations: readMigrations(ingestService.migrationsDir),
    metrics: Object.values(options.metrics),
    openapi: {
      info: {
        title: 'ingest',
        version: '1.0.0',
        description:
          'Live measurements: SenML packs (RFC 8428) from the dataloggers, over HTTP (here) or MQTT (campus/<datalogger>/senml).',
      },
      securitySchemes: {
        APIKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        BearerToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'An access token of the OAuth server with write_energy',
        },
      },
    },
  })
  const failures = createAttemptCounter(60, options.redisUrl, 'ingest-rl:auth-failures:')
  const throttle = failedAuthentications(failures, options.failedAuthLimit ?? 30)
  app.addHook('onClose', async () => failures.close())
  const dpop = resourceProofs(options.redisUrl, 'ingest-rl:dpop-jti:', options.dpopNonceKey)
  app.addHook('onClose', async () => dpop.once.close())
  // the raw text is kept: a refused pack goes to the quarantine as it came
  app.addContentTypeParser(SENML_TYPES, { parseAs: 'string' }, (_request, body, done) => done(null, body))

  app.post(
    '/ingest/senml',
    {
      schema: {
        summary: 'Take a SenML pack',
        description:
          'A SenML JSON pack (RFC 8428): records named `urn:campus:meter:<id>`, a value `v` (a reading; an ' +
          "energy or volume meter's increment) or a register `s`, a time `t`, a unit `u` the meter's unit " +
          'converts from. Records that cannot be taken go to the quarantine with their reason (listed here); ' +
          'the others are written, all in one transaction. Needs an API key with a pattern under `/ingest/`, ' +
          'or an access token of the OAuth server with the `write_energy` scope.',
        security: [{ APIKeyHeader: [] }, { BearerToken: [] }],
        consumes: SENML_TYPES,
        headers: Type.Object({
          'x-api-key': Type.Optional(Type.String()),
          authorization: Type.Optional(Type.String({ description: 'Bearer <access token with write_energy>' })),
        }),
        body: Type.String({ description: 'The SenML pack, as JSON text' }),
        response: {
          200: Taken,
          401: Detail,
          403: Detail,
          415: Detail,
          422: Detail,
          429: RateLimitedResponse,
          503: Detail,
        },
      },
    },
    async (request, reply) => {
      const credential = await authorize(request, options.database, options.tokens, dpop.proofs, throttle)
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
      if (!SENML_TYPES.includes(type)) {
        throw new DetailError(415, `Unsupported Media Type: send ${SENML_TYPES.join(' or ')}`)
      }
      options.metrics.messages.inc({ transport: 'http' })
      const message = { source: `http:${credential.name}`, payload: request.body, receivedMs: Date.now() }
      let result: Awaited<ReturnType<typeof takeMessages>>
      try {
        result = await inTransaction(options.database.pool, (c) =>
          takeMessages(c, [message], { maxFutureMs: options.maxFutureMs }),
        )
      } catch (error) {
        request.log.warn({ err: error }, 'the database could not take the pack')
        if (unavailable(error)) {
          throw new DetailError(503, 'The measurements could not be written now; send the pack again', {
            headers: { 'Retry-After': '5' },
          })
        }
        // refused for what it holds: kept whole, never sent again in vain
        await quarantineWhole(options.database.pool, message, error).catch(() => {
          throw new DetailError(503, 'The measurements could not be written now; send the pack again', {
            headers: { 'Retry-After': '5' },
          })
        })
        options.metrics.quarantined.inc({ code: 'not_written' })
        throw new DetailError(422, 'The pack could not be written (kept in the quarantine)')
      }
      options.metrics.samples.inc(result.samples)
      options.metrics.duplicates.inc(result.duplicates)
      for (const r of result.refused) options.metrics.quarantined.inc({ code: r.code })
      const whole = result.refused.find((r) => r.index === null)
      // the key's bookkeeping: a pack taken, as a read answered is at the data API
      if (!whole && credential.keyId !== undefined) await touchApiKey(options.database.db, credential.keyId)
      if (whole) return reply.code(422).send({ detail: `${whole.reason} (kept in the quarantine)` })
      return {
        samples: result.samples,
        duplicates: result.duplicates,
        quarantined: result.quarantined,
        refused: result.refused,
      }
    },
  )
  return app
}
