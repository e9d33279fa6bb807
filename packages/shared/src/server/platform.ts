import { constants } from 'node:zlib'
import compress, { type FastifyCompressOptions } from '@fastify/compress'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, HTTPMethods } from 'fastify'
import type { Kysely } from 'kysely'
import type { OpenAPIV3_1 } from 'openapi-types'
import type { Metric } from 'prom-client'
import type { MigrationFile } from '../db/migrator.ts'
import { type ErrorFormat, HttpError } from '../errors.ts'
import { type CorsPolicies, corsStep, pathOf, registerUnansweredOptions } from './cors.ts'
import { type FrontDoor, registerFrontDoor } from './front-door.ts'
import { type ReadinessCheck, registerHealth } from './health.ts'
import { registerMetrics } from './metrics.ts'
import { FINITE_NUMBERS, type ParameterRule, refusedParameters, toValidationIssues } from './validation.ts'

export interface PlatformOptions<DB> {
  service: string
  errors: ErrorFormat
  db: Kysely<DB>
  migrations: MigrationFile[]
  /** Bearer token /metrics requires (METRICS_TOKEN); unset, only this machine may read them. */
  metricsToken?: string | undefined
  /** The service's own metrics (`serviceCounter`), shown at /metrics beside the platform's. */
  metrics?: readonly Metric[]
  /** Which paths answer other origins, and how (see cors.ts); absent: none. */
  cors?: CorsPolicies
  /**
   * Headers every answer of a path carries, errors included (security headers, caching): the
   * same object for the same headers; absent or undefined: none beyond the platform's.
   */
  pathHeaders?: (path: string) => Readonly<Record<string, string>> | undefined
  /** Values no parameter may hold, beyond non-finite numbers (refused for every service). */
  parameterRules?: readonly ParameterRule[]
  /** `GET /` and the icon. */
  frontDoor?: FrontDoor
  /**
   * A path that names a route but for its trailing slash (`/metadata/meters` of the route
   * `/metadata/meters/`) is redirected to it with 307, as FastAPI's routers do; else 404.
   */
  redirectSlashes?: boolean
  openapi: {
    info: { title: string; version: string; description?: string; license?: { name: string; url?: string } }
    tags?: Array<{ name: string; description?: string }>
    securitySchemes?: Record<string, OpenAPIV3_1.SecuritySchemeObject>
    healthTags?: string[]
  }
  /**
   * Swagger UI's Authorize button signs in at an OAuth server by code + PKCE as this public
   * client (its redirect URI: `/docs/static/oauth2-redirect.html` of this service); the page may
   * then reach that server's origin, and no other. Absent: API keys only.
   */
  swaggerOAuth?: { clientId: string; issuer: string; scopes: string[] }
  /** Checks of the service's own that /health/ready runs beside the database's (a stalled writer, a broker). */
  readiness?: Record<string, ReadinessCheck>
}

/**
 * gzip and brotli by Accept-Encoding, streams compressed as they go. Measured by
 * `bench/compression.ts` on ten years of 15-minute CSV (20.8 MB) and a year of JSON (6.7 MB):
 * gzip 6 made fewer bytes than brotli 4 (27 % / 12 % against 30 % / 13 %) at a similar speed,
 * so it goes first when a client takes both at the same weight (browsers do); brotli 11 and
 * gzip 9 cost many times the CPU for at most 12 % fewer bytes, too slow for a streamed export.
 * Brotli's window is 256 kB (lgwin 18): with the default 4 MB, a ten-year export peaked at
 * 198 MB RSS instead of 161 MB, for no fewer bytes.
 */
const COMPRESSION: FastifyCompressOptions = {
  encodings: ['gzip', 'br'],
  brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_LGWIN]: 18 } },
  zlibOptions: { level: 6 },
  // request bodies are small forms and JSON: none arrives compressed, so no route pays for a
  // decompression hook
  globalDecompression: false,
}

function sendError(reply: FastifyReply, error: HttpError) {
  return reply.code(error.statusCode).headers(error.headers).send(error.body())
}

/**
 * Swagger UI sets one inline style attribute while it loads, which `style-src 'self'` blocks
 * (a console error on every visit): this allows that one by its hash (as the browser reports
 * it), nothing else inline. The browser test of /docs fails on any other refused style.
 */
const SWAGGER_UI_INLINE_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"
const swaggerStyleAllowed = (header: string) =>
  header.replace("style-src 'self'", `style-src 'self' 'unsafe-hashes' ${SWAGGER_UI_INLINE_STYLE}`)

/**
 * `getApiV4UsersById` for `GET /api/v4/users/:id`: the name a generated client gives the
 * operation, unless the route names it (a trailing slash, part of a path the contract fixes, adds
 * `Index`).
 */
export function operationIdOf(method: string, url: string): string {
  const words = url
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? `by-${segment.slice(1)}` : segment))
    .flatMap((segment) => segment.split(/[^A-Za-z0-9]+/))
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
  return `${method.toLowerCase()}${words.join('')}${url.length > 1 && url.endsWith('/') ? 'Index' : ''}`
}

/**
 * Every documented operation has an operationId (generated clients name their methods after it)
 * and says what it needs: a route that declares no security needs no credential (`security: []`).
 */
function documentedOperation({
  schema,
  url,
  route,
}: {
  schema: FastifySchema
  url: string
  route: { method: string | string[] }
}): { schema: FastifySchema; url: string } {
  const method = Array.isArray(route.method) ? (route.method[0] ?? 'GET') : route.method
  const declared = (schema ?? {}) as FastifySchema & { operationId?: string; security?: FastifySchema['security'] }
  return {
    schema: {
      ...declared,
      operationId: declared.operationId ?? operationIdOf(method, url),
      security: declared.security ?? [],
    } as FastifySchema,
    url,
  }
}

/**
 * What both services share around their routes: one error handler, request ids,
 * OpenAPI (`/openapi.json`, Swagger UI at `/docs`), `/metrics` and the health probes.
 * Register it first, then the service's routes, in the same encapsulation context.
 */
export async function registerPlatform<DB>(app: FastifyInstance, options: PlatformOptions<DB>): Promise<void> {
  const { errors } = options
  // no route takes text: a text body is a 415 naming what is taken, not a validation error
  app.removeContentTypeParser('text/plain')

  // first: its onRoute hook gives every route added after it a recorder of its answers
  const metrics = registerMetrics(app, options.service, { token: options.metricsToken, errors }, options.metrics)

  // One hook per phase, each a plain callback, for every request: an async hook costs a promise
  // and a turn of the microtask queue, and each hook a step of Fastify's iteration (four hooks
  // instead of eight on a cached `GET /api/v4/user`: about 1 % more answers a second).
  const cors = options.cors ? corsStep(options.cors) : undefined
  const { pathHeaders } = options
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    if (pathHeaders === undefined && cors === undefined) return done()
    const path = pathOf(request.url)
    const headers = pathHeaders?.(path)
    if (headers !== undefined) reply.headers(headers)
    // a preflight is answered by CORS alone, before any authentication
    if (cors?.(request, reply, path)) return
    done()
  })
  const rules = [FINITE_NUMBERS, ...(options.parameterRules ?? [])]
  app.addHook('preHandler', (request, _reply, done) => {
    const refused = refusedParameters(request, rules)
    if (refused === undefined) return done()
    done(errors.validation(refused))
  })
  // a probe answered OK is routine (an orchestrator asks every few seconds): debug, not info; so is
  // "not ready" while the service starts (until its first OK): only a service that was ready and
  // is no more says so at info
  let beenReady = false
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) metrics.recordUnmatched(request, reply)
    const probe = (request.routeOptions.config as { probe?: 'live' | 'ready' }).probe
    const ok = reply.statusCode < 400
    const routine = probe !== undefined && (ok || !beenReady)
    if (probe === 'ready' && ok) beenReady = true
    request.log[routine ? 'debug' : 'info'](
      { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      'request',
    )
    done()
  })

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpError) {
      // a 503 says "later" (a writer or a bound full), as expected under load as a 429: a warning
      if (error.statusCode === 503) request.log.warn({ err: error.cause ?? error }, error.message)
      else if (error.statusCode >= 500) request.log.error({ err: error.cause ?? error }, error.message)
      return sendError(reply, error)
    }
    if (error.validation) {
      return sendError(
        reply,
        errors.validation(toValidationIssues(error.validation, error.validationContext ?? 'body')),
      )
    }
    const status = error.statusCode
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendError(reply, errors.clientError(415, unsupportedMediaType(request)))
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendError(reply, errors.clientError(status, error.message))
    }
    request.log.error({ err: error }, 'unhandled error')
    return sendError(reply, errors.internal())
  })

  await app.register(compress, COMPRESSION)
  if (cors) registerUnansweredOptions(app)

  app.setNotFoundHandler((request, reply) => {
    const other = options.redirectSlashes ? slashTwin(app, request) : undefined
    if (other) return reply.redirect(other, 307)
    return sendError(reply, errors.notFound(request.method, request.url))
  })

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: options.openapi.info,
      // relative to the document: wherever the service is reached, its operations are there too
      servers: [{ url: '/', description: 'This server' }],
      tags: options.openapi.tags,
      components: { securitySchemes: options.openapi.securitySchemes ?? {} },
    },
    transform: documentedOperation,
  })
  const oauth = options.swaggerOAuth
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    transformStaticCSP: (header: string) =>
      // default-src 'self' would keep the token request from the OAuth server
      swaggerStyleAllowed(header) + (oauth ? ` connect-src 'self' ${new URL(oauth.issuer).origin};` : ''),
    ...(oauth
      ? { initOAuth: { clientId: oauth.clientId, scopes: oauth.scopes, usePkceWithAuthorizationCodeGrant: true } }
      : {}),
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  if (options.frontDoor) registerFrontDoor(app, options.frontDoor)
  registerHealth(app, {
    db: options.db,
    migrations: options.migrations,
    tags: options.openapi.healthTags,
    ...(options.readiness ? { checks: options.readiness } : {}),
  })
}

/**
 * The request's path with its trailing slash added or removed, when that names a route of the
 * same method (its query kept); only routes without parameters, so the answer is always one of
 * this service's own paths.
 */
function slashTwin(app: FastifyInstance, request: FastifyRequest): string | undefined {
  const path = pathOf(request.url)
  if (path === '/' || path.includes('//')) return undefined
  const twin = path.endsWith('/') ? path.slice(0, -1) : `${path}/`
  if (!app.hasRoute({ method: request.method as HTTPMethods, url: twin })) return undefined
  return twin + request.url.slice(path.length)
}

/** The body types a service may parse, in the order a 415 names them. */
const BODY_TYPES = ['application/x-www-form-urlencoded', 'application/json', 'application/senml+json']

/**
 * A 415 that says what would have been taken (Fastify's names only what was sent, or `undefined`):
 * the route's own `consumes` where its schema declares them, else every type the service parses.
 */
function unsupportedMediaType(request: FastifyRequest): string {
  const sent = request.headers['content-type']
  const declared = (request.routeOptions.schema as { consumes?: readonly string[] } | undefined)?.consumes
  const accepted = declared ?? BODY_TYPES.filter((type) => request.server.hasContentTypeParser(type))
  return `Unsupported Media Type: ${sent ? `${sent.split(';')[0]} is not taken` : 'the body has no Content-Type'}; send ${accepted.join(', ')}`
}
