import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import {
  accessTokenOf,
  authenticate,
  authenticateBearer,
  DetailError,
  type EnergyDatabase,
  energyErrors,
  failedAuthentications,
  RateLimitedResponse,
  resourceProofs,
  type TokenIntrospector,
  touchApiKey,
  unauthorized,
  WRITE_ENERGY,
  writeAllowed,
} from '@campus/energy-data/live'
import {
  createAttemptCounter,
  type Database,
  type DpopProofs,
  type ReadinessCheck,
  readMigrations,
  registerPlatform,
  serverOptions,
} from '@campus/shared'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import Type from 'typebox'
import { type HeldBytes, HttpShares } from './held-bytes.ts'
import type { IngestMetrics } from './metrics.ts'
import { ingestService } from './service.ts'
import { type Writer, WriterUnavailable } from './writer.ts'

export interface IngestAppOptions {
  database: Database<EnergyDatabase>
  metrics: IngestMetrics
  /** The one writer of live messages (the broker's too). */
  writer: Writer
  logLevel?: string
  /** Largest pack taken, decompressed (INGEST_MAX_BODY_BYTES). */
  maxBodyBytes: number
  /** The bytes of packs taken and not yet committed, shared with the broker's session (INGEST_IN_FLIGHT_MB). */
  inFlight: HeldBytes
  /** Checks /health/ready runs beside the database's: the writer, the broker. */
  readiness?: Record<string, ReadinessCheck>
  /** Introspects the OAuth server's access tokens; absent: API keys only. */
  tokens?: TokenIntrospector | undefined
  /** Failed authentications a minute per address before 429 (INGEST_RATE_LIMIT_FAILED_AUTH). */
  failedAuthLimit?: number
  /** Redis for the failure counters and the DPoP proofs' used jti (across instances); absent: this process's memory. */
  redisUrl?: string | undefined
  /** Key of the DPoP nonces asked of proofs (ENERGY_DPOP_NONCE_SECRET); absent: none. */
  dpopNonceKey?: Buffer | undefined
  /** Packs one credential may post a minute (INGEST_RATE_LIMIT_CREDENTIAL); past it 429 with Retry-After. */
  credentialLimit?: number
  /** The bearer token /metrics wants (METRICS_TOKEN); absent: only this machine reads them. */
  metricsToken?: string | undefined
  /** Reverse proxies whose X-Forwarded-For names the client (INGEST_TRUSTED_PROXIES): its limits count that address. */
  trustedProxies?: readonly string[]
}

const SENML_TYPES = ['application/senml+json', 'application/json']

/** Content-Encodings a gateway may compress a pack with, each decompressed to at most the pack limit. */
const DECODERS: Record<string, (body: Buffer, maxOutputLength: number) => Buffer> = {
  gzip: (body, maxOutputLength) => gunzipSync(body, { maxOutputLength }),
  deflate: (body, maxOutputLength) => inflateSync(body, { maxOutputLength }),
  br: (body, maxOutputLength) => brotliDecompressSync(body, { maxOutputLength }),
}
const ENCODINGS = ['identity', ...Object.keys(DECODERS)]

/** The Content-Encoding a pack declares, `identity` when none. */
const encodingOf = (request: FastifyRequest): string =>
  String(request.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase()

/** The pack as sent: decompressed (bounded) when the gateway compressed it. */
function decoded(request: FastifyRequest, body: Buffer, maxBytes: number): Buffer {
  const encoding = encodingOf(request)
  if (encoding === 'identity') return body
  const decode = DECODERS[encoding]
  if (!decode) {
    throw new DetailError(415, `Unsupported Content-Encoding ${encoding}: send ${ENCODINGS.join(', ')}`, {
      headers: { 'Accept-Encoding': ENCODINGS.join(', ') },
    })
  }
  try {
    return decode(body, maxBytes)
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      throw new DetailError(413, `The pack holds more than ${maxBytes} bytes once decompressed`)
    }
    throw new DetailError(400, `The body is not valid ${encoding}`)
  }
}

const Detail = Type.Object({ detail: Type.String() }, { title: 'Error' })
const Refusal = Type.Object({
  index: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Record index in the pack; null: the whole payload',
  }),
  code: Type.String(),
  reason: Type.String(),
})
const NotTaken = Type.Object(
  {
    detail: Type.String(),
    refused: Type.Optional(
      Type.Array(Refusal, { description: 'Each record refused (all of them: nothing was taken)' }),
    ),
  },
  { title: 'NotTaken' },
)
const Taken = Type.Object(
  {
    samples: Type.Integer({ description: 'Samples stored' }),
    duplicates: Type.Integer({ description: 'Samples already stored (same meter and instant), counted once' }),
    quarantined: Type.Integer({ description: 'Records put in the quarantine (listed in `refused`)' }),
    refused: Type.Array(Refusal),
  },
  { title: 'Taken' },
)

type Credential = { name: string; keyId?: number }

/**
 * The bytes a pack may hold while it is read and written, from its headers: as declared, and the
 * decompressed pack beside it when it comes compressed (the most a body may bring when it declares
 * no length).
 */
function packBytes(request: FastifyRequest, maxBytes: number): number {
  const declared = Number(request.headers['content-length'])
  const body = Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, maxBytes) : maxBytes
  return encodingOf(request) === 'identity' ? body : body + maxBytes
}

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
): Promise<Credential> {
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
): Promise<Credential> {
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
    ...serverOptions('ingest', options.logLevel ?? 'silent', energyErrors, {
      trustedProxies: options.trustedProxies ?? [],
    }),
    bodyLimit: options.maxBodyBytes,
  }).withTypeProvider<TypeBoxTypeProvider>()
  await registerPlatform(app, {
    service: 'ingest',
    errors: energyErrors,
    db: options.database.db,
    migrations: readMigrations(ingestService.migrationsDir),
    metrics: Object.values(options.metrics),
    metricsToken: options.metricsToken,
    ...(options.readiness ? { readiness: options.readiness } : {}),
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
  // a valid credential too: a leaked gateway key cannot flood the write path
  const posts = createAttemptCounter(60, options.redisUrl, 'ingest-rl:credential:')
  app.addHook('onClose', async () => posts.close())
  const dpop = resourceProofs(options.redisUrl, 'ingest-rl:dpop-jti:', options.dpopNonceKey)
  app.addHook('onClose', async () => dpop.once.close())
  // the raw bytes are kept: a refused pack goes to the quarantine as it came
  app.addContentTypeParser(SENML_TYPES, { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, decoded(request, body as Buffer, options.maxBodyBytes))
    } catch (error) {
      done(error as Error, undefined)
    }
  })

  // the credential of each request, found from its headers before its body is read
  const credentials = new WeakMap<FastifyRequest, Credential>()
  const shares = new HttpShares(options.inFlight)
  app.post(
    '/ingest/senml',
    {
      // a sender without a valid credential, over its rate or past the bytes bound is answered
      // before its body is read: neither its bytes nor their decompression cost anything
      onRequest: async (request, reply) => {
        const credential = await authorize(request, options.database, options.tokens, dpop.proofs, throttle)
        const limit = options.credentialLimit ?? 600
        const wait = await posts.attempt([[credential.name, limit]])
        if (wait !== undefined) {
          throw new DetailError(
            429,
            `Rate limit exceeded: at most ${limit} packs a minute for this credential, retry in ${wait} s`,
            { headers: { 'retry-after': String(wait) } },
          )
        }
        const release = shares.take(credential.name, packBytes(request, options.maxBodyBytes))
        if (!release) {
          throw new DetailError(503, 'The service holds as many packs as it may until some are written; send again', {
            headers: { 'Retry-After': '5' },
          })
        }
        // held until the answer is sent (after the commit) or the sender leaves
        reply.raw.once('close', release)
        credentials.set(request, credential)
      },
      schema: {
        summary: 'Take a SenML pack',
        description:
          'A SenML JSON pack (RFC 8428): records named `urn:campus:meter:<id>`, a value `v` (a reading; an ' +
          "energy or volume meter's increment) or a register `s`, a time `t`, a unit `u` the meter's unit " +
          'converts from. Records that cannot be taken go to the quarantine with their reason (listed here); ' +
          'the others are written, all in one transaction. Needs an API key with a pattern under `/ingest/`, ' +
          'or an access token of the OAuth server with the `write_energy` scope, checked from the headers before the ' +
          'body is read. 503 with Retry-After: the service holds as many bytes of packs as it may until some are ' +
          'written (HTTP packs half of INGEST_IN_FLIGHT_MB, one credential a quarter), or the database cannot take ' +
          'the pack now; send it again.',
        security: [{ APIKeyHeader: [] }, { BearerToken: [] }],
        consumes: SENML_TYPES,
        headers: Type.Object({
          'x-api-key': Type.Optional(Type.String()),
          authorization: Type.Optional(Type.String({ description: 'Bearer <access token with write_energy>' })),
        }),
        body: Type.Any({ description: 'The SenML pack, as JSON text (Content-Encoding gzip, deflate or br accepted)' }),
        response: {
          200: Taken,
          400: Detail,
          401: Detail,
          403: Detail,
          413: Detail,
          415: Detail,
          422: NotTaken,
          429: RateLimitedResponse,
          503: Detail,
        },
      },
    },
    async (request, reply) => {
      const credential = credentials.get(request) as Credential
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
      if (!SENML_TYPES.includes(type)) {
        throw new DetailError(415, `Unsupported Media Type: send ${SENML_TYPES.join(' or ')}`)
      }
      options.metrics.messages.inc({ transport: 'http' })
      const message = { source: `http:${credential.name}`, payload: request.body as Buffer, receivedMs: Date.now() }
      let result: Awaited<ReturnType<Writer['take']>>
      try {
        result = await options.writer.take(message)
      } catch (error) {
        if (!(error instanceof WriterUnavailable)) throw error
        request.log.warn({ err: error }, 'the database could not take the pack')
        throw new DetailError(503, 'The measurements could not be written now; send the pack again', {
          headers: { 'Retry-After': '5' },
        })
      }
      const whole = result.refused.find((r) => r.index === null)
      if (whole) return reply.code(422).send({ detail: `${whole.reason} (kept in the quarantine)` })
      if (result.samples === 0 && result.duplicates === 0 && result.refused.length > 0) {
        return reply.code(422).send({
          detail: 'No record of the pack could be taken (each is kept in the quarantine with its reason)',
          refused: result.refused,
        })
      }
      // the key's bookkeeping: a pack taken, as a read answered is at the data API
      if (credential.keyId !== undefined) await touchApiKey(options.database.db, credential.keyId)
      return {
        samples: result.samples,
        duplicates: result.duplicates,
        quarantined: result.refused.length,
        refused: result.refused,
      }
    },
  )
  return app
}
