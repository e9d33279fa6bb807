import {
  DetailError,
  digestApiKey,
  type EnergyDatabase,
  energyErrors,
  findApiKeyByDigest,
  inTransaction,
  looksLikeApiKey,
  takeMessages,
  touchApiKey,
  writeAllowed,
} from '@campus/energy-data/live'
import { type Database, readMigrations, registerPlatform, serverOptions } from '@campus/shared'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import Type from 'typebox'
import type { IngestMetrics } from './metrics.ts'
import { ingestService } from './service.ts'

export interface IngestAppOptions {
  database: Database<EnergyDatabase>
  metrics: IngestMetrics
  logLevel?: string
  maxFutureMs: number
  maxBodyBytes: number
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

/** An `x-api-key` that may write here: valid, and with a pattern under /ingest/ covering the path. */
async function authorize(request: FastifyRequest, database: Database<EnergyDatabase>): Promise<string> {
  const header = request.headers['x-api-key']
  const key = typeof header === 'string' ? header.trim() : ''
  if (!key) throw new DetailError(401, 'Missing API key (x-api-key)', { headers: { 'WWW-Authenticate': 'APIKey' } })
  const record = looksLikeApiKey(key) ? await findApiKeyByDigest(database.db, digestApiKey(key)) : undefined
  const invalid = !record
    ? 'Invalid API key'
    : record.revoked_at
      ? 'API key revoked'
      : record.expires_at && record.expires_at.getTime() <= Date.now()
        ? 'API key expired'
        : undefined
  if (invalid || !record)
    throw new DetailError(401, invalid ?? 'Invalid API key', { headers: { 'WWW-Authenticate': 'APIKey' } })
  if (!writeAllowed(record.endpoints, request.url.split('?')[0] ?? '')) {
    throw new DetailError(403, 'This API key may not write: it needs an endpoint pattern under /ingest/')
  }
  await touchApiKey(database.db, record.id)
  return record.name
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
      securitySchemes: { APIKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
    },
  })
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
          'the others are written, all in one transaction. Needs an API key with a pattern under `/ingest/`.',
        security: [{ APIKeyHeader: [] }],
        headers: Type.Object({ 'x-api-key': Type.Optional(Type.String()) }),
        body: Type.String({ description: 'The SenML pack, as JSON text' }),
        response: { 200: Taken, 401: Detail, 403: Detail, 415: Detail, 422: Detail, 503: Detail },
      },
    },
    async (request, reply) => {
      const keyName = await authorize(request, options.database)
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
      if (!SENML_TYPES.includes(type)) {
        throw new DetailError(415, `Unsupported Media Type: send ${SENML_TYPES.join(' or ')}`)
      }
      options.metrics.messages.inc({ transport: 'http' })
      const message = { source: `http:${keyName}`, payload: request.body, receivedMs: Date.now() }
      let result: Awaited<ReturnType<typeof takeMessages>>
      try {
        result = await inTransaction(options.database.pool, (c) =>
          takeMessages(c, [message], { maxFutureMs: options.maxFutureMs }),
        )
      } catch (error) {
        request.log.warn({ err: error }, 'the database could not take the pack')
        throw new DetailError(503, 'The measurements could not be written now; send the pack again', {
          headers: { 'Retry-After': '5' },
        })
      }
      options.metrics.samples.inc(result.samples)
      options.metrics.duplicates.inc(result.duplicates)
      for (const r of result.refused) options.metrics.quarantined.inc({ code: r.code })
      const whole = result.refused.find((r) => r.index === null)
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
