import { addVary, announceResourceMetadata, createAttemptCounter, dpopChallenge, pathOf } from '@campus/shared'
import type { FastifyRequest, FastifySchema } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import {
  accessTokenOf,
  authenticate,
  authenticateBearer,
  failedAuthentications,
  REALM,
  resourceProofs,
  unauthorized,
} from '../auth/credentials.ts'
import { type BearerToken, type IntrospectionSettings, TokenIntrospector } from '../auth/introspection.ts'
import { endpointAllowed, looksLikeApiKey, MANAGE_PATH_PREFIX, manageAllowed } from '../domain/api-keys.ts'
import type { EnergyApp } from '../energy-app.ts'
import { DetailError } from '../errors.ts'
import { type ApiKeyRecord, touchApiKey } from '../repositories/api-keys.ts'
import { keyErrorResponses, TWO_CREDENTIALS } from '../schemas/errors.ts'

/**
 * How a route is guarded, declared in its options as `config: { auth: ... }`:
 * - `'key'` (the default for every route that says nothing): an `x-api-key` whose endpoint
 *   patterns cover the request path, or an OAuth access token (`Authorization: Bearer`, or
 *   `Authorization: DPoP` with a proof for a DPoP-bound token) with the `read_energy` scope; 401 without a valid credential, 403 outside the key's patterns or
 *   without the scope.
 * - `'key-any-endpoint'`: any valid key or active token (the /auth checks, which only look at it).
 * - `'manage'`: a change to the alert rules: a key with a pattern under `/alerts/` that covers the
 *   path (`*` alone is a reading key and does not), or a token with the `manage_energy` scope.
 * - `'public'`: no key, unless ENERGY_REQUIRE_KEY_EVERYWHERE is set; rate limited per address.
 * The platform's own routes (front door and icon, health, docs, OpenAPI, metrics) are never guarded.
 */
export type RouteAuth = 'key' | 'key-any-endpoint' | 'manage' | 'public'

/** Route config of the changes to alert rules. */
export const MANAGE_ROUTE = { auth: 'manage' } as const

/** Route config of the views anyone may call. */
export const PUBLIC_ROUTE = { auth: 'public' } as const

/** Every route of the API with its guard, for `/auth/apikey/endpoints`. */
export type EndpointCatalog = Array<{ path: string; auth: RouteAuth }>

// what a route declares and a request carries: per-route and per-request, not decorations of the instance
declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth
  }
  interface FastifyRequest {
    /** The key the request was authenticated with, when it carried a valid one. */
    apiKey?: ApiKeyRecord
    /** The OAuth access token the request was authenticated with, when it carried an active one. */
    bearer?: BearerToken
  }
}

/** The scope of an OAuth access token that opens every read endpoint (all of them are). */
export const READ_ENERGY = 'read_energy'

/** The scope of an OAuth access token that may change the alert rules. */
export const MANAGE_ENERGY = 'manage_energy'

/** What a key-protected route declares in its schema: the header and the OpenAPI security entry. */
export const apiKeyHeaders = Type.Object({
  'x-api-key': Type.Optional(
    Type.String({
      description: 'API key (`pnpm energy key:create`); or an OAuth access token as `Authorization: Bearer`',
    }),
  ),
})
export const apiKeySecurity = [{ APIKeyHeader: [] }]

/** The security schemes of the OpenAPI document: API keys, and OAuth 2 when an OAuth server is configured. */
export function securitySchemes(oauth: IntrospectionSettings | undefined) {
  return {
    APIKeyHeader: { type: 'apiKey' as const, in: 'header' as const, name: 'x-api-key' },
    ...(oauth
      ? {
          OAuth2: {
            type: 'oauth2' as const,
            description: 'An access token of the OAuth server (authorization code with PKCE)',
            flows: {
              authorizationCode: {
                authorizationUrl: `${oauth.issuer}/oauth/authorize`,
                tokenUrl: `${oauth.issuer}/oauth/token`,
                scopes: { [READ_ENERGY]: 'Every read endpoint of the data API' },
              },
            },
          },
        }
      : {}),
  }
}

const INFRASTRUCTURE = /^\/($|favicon\.ico$|health\/|docs|openapi\.json|metrics|\.well-known\/)/

/** This service's URL as the client addressed it (trusted proxies honoured): its resource identifier (RFC 9728), the base of a DPoP proof's htu. */
export const publicBase = (request: FastifyRequest): string => `${request.protocol}://${request.host}`

/**
 * Whose request it is, for what is counted per caller (the request rate, the streams held): the
 * API key, the application and user of an access token however many tokens they mint, else the
 * client address.
 */
export function credentialKey(request: FastifyRequest): string {
  if (request.apiKey) return `key:${request.apiKey.id}`
  if (request.bearer) return `client:${request.bearer.clientId ?? '-'}:user:${request.bearer.username ?? '-'}`
  return `ip:${request.ip}`
}

/** The guard a route runs under; undefined for the platform's own routes. */
export function routeAuth(request: FastifyRequest): RouteAuth | undefined {
  const declared = request.routeOptions.config.auth
  if (declared) return declared
  const url = request.routeOptions.url
  if (url === undefined || INFRASTRUCTURE.test(url)) return undefined
  return 'key'
}

/** The request headers a keyed answer depends on. */
const CREDENTIAL_HEADERS = 'x-api-key, Authorization'

type Credential = { scheme: 'key' | 'bearer'; value: string; dpop?: boolean }

/**
 * The one credential of a request: `x-api-key` or `Authorization: Bearer`, never two (without an
 * OAuth server, a key wins and the header is ignored, as before tokens were accepted). The same
 * string in both is one credential, as a client generated from the OpenAPI document sends the one
 * it was given under every scheme: a key when it has a key's shape, else a token.
 */
function credentialOf(request: FastifyRequest, bearerAccepted: boolean): Credential | undefined {
  const header = request.headers['x-api-key']
  const key = (Array.isArray(header) ? header[0] : header) || undefined
  const token = accessTokenOf(request.headers.authorization)
  const bearer = token?.value
  if (key !== undefined && bearer !== undefined && bearerAccepted) {
    if (key !== bearer) throw new DetailError(400, TWO_CREDENTIALS)
    return looksLikeApiKey(key) ? { scheme: 'key', value: key } : { scheme: 'bearer', value: bearer, dpop: token?.dpop }
  }
  if (key !== undefined) return { scheme: 'key', value: key }
  return bearer === undefined ? undefined : { scheme: 'bearer', value: bearer, dpop: token?.dpop }
}

/**
 * The API's endpoints a credential may call: a key's patterns' matches (a token's: all of them with
 * `read_energy`), the key-only checks and the public ones.
 */
export function endpointsFor(
  catalog: Readonly<EndpointCatalog>,
  credential: { apiKey?: ApiKeyRecord | undefined; bearer?: BearerToken | undefined },
): string[] {
  const { apiKey, bearer } = credential
  const allowed = (path: string) =>
    apiKey ? endpointAllowed(apiKey.endpoints, path) : (bearer?.scopes.includes(READ_ENERGY) ?? false)
  return catalog
    .filter((e) => {
      if (e.auth === 'key') return allowed(e.path)
      if (e.auth === 'manage')
        return apiKey ? manageAllowed(apiKey.endpoints, e.path) : (bearer?.scopes.includes(MANAGE_ENERGY) ?? false)
      return true
    })
    .map((e) => e.path)
    .sort()
}

/**
 * The answers the guards (this plugin and the rate limit) can give, added to a route's response
 * schemas where it does not declare them, so that the OpenAPI document lists every status.
 */
function declareGuardResponses(
  schema: FastifySchema | undefined,
  auth: RouteAuth,
  options: { requireKeyEverywhere: boolean; bearer: boolean },
) {
  const responses = schema?.response as Record<string, unknown> | undefined
  if (!responses) return
  const keyed = auth !== 'public' || options.requireKeyEverywhere
  const guard: Record<string, unknown> = keyed
    ? { 401: keyErrorResponses[401], 403: keyErrorResponses[403], 429: keyErrorResponses[429] }
    : { 429: keyErrorResponses[429] }
  if (keyed && options.bearer) Object.assign(guard, { 400: keyErrorResponses[400], 503: keyErrorResponses[503] })
  for (const [status, body] of Object.entries(guard)) responses[status] ??= body
  // a route that documents the API key also takes the OAuth server's tokens
  const declared = schema as { security?: Array<Record<string, string[]>> }
  if (keyed && options.bearer && declared.security && !declared.security.some((s) => 'OAuth2' in s)) {
    declared.security = [...declared.security, { OAuth2: [READ_ENERGY] }]
  }
}

/**
 * Decorates `endpointCatalog`; checks `x-api-key` before anything else runs (no validation detail
 * leaks to anonymous callers) on every route registered after it.
 */
export const authPlugin = fp(
  async (app) => {
    const { db, settings } = app as EnergyApp
    const { requireKeyEverywhere } = settings
    const tokens = settings.oauth ? new TokenIntrospector(settings.oauth) : undefined
    const bothChallenges = tokens ? `APIKey, Bearer ${REALM}, ${dpopChallenge()}` : 'APIKey'
    const dpop = resourceProofs(settings.redisUrl, `${settings.rateLimitPrefix}dpop-jti:`, settings.oauth?.dpopNonceKey)
    app.addHook('onClose', async () => dpop.once.close())
    // RFC 9728 5.1: a 401 names where a client that knows only this URL finds the OAuth server
    if (tokens) app.addHook('onSend', announceResourceMetadata(publicBase))
    const catalog: EndpointCatalog = []
    const touched = new Map<number, number>()
    app.decorate('endpointCatalog', catalog)
    app.addHook('onRoute', (route) => {
      const url = route.url ?? route.path
      if (!url || INFRASTRUCTURE.test(url) || route.method === 'HEAD' || route.schema?.hide) return
      const path = url.replace(/:(\w+)/g, '{$1}')
      const auth = route.config?.auth ?? 'key'
      if (!catalog.some((e) => e.path === path)) catalog.push({ path, auth })
      declareGuardResponses(route.schema, auth, { requireKeyEverywhere, bearer: tokens !== undefined })
    })
    // failed authentications are counted per address (in Redis when configured, so across
    // instances); past the limit an address is refused before any check, so bogus keys stop
    // costing lookups and bogus tokens introspections. Valid credentials count nothing: a busy
    // client with many requests in flight is never slowed by this.
    const failures = createAttemptCounter(60, settings.redisUrl, `${settings.rateLimitPrefix}auth-failures:`)
    const throttle = failedAuthentications(failures, settings.rateLimitFailedAuth)
    app.addHook('onClose', async () => failures.close())
    /** Who the request is, on the credential's own terms; the route's rule is checked by the caller. */
    const identify = async (request: FastifyRequest, credential: Credential) => {
      throttle.check(request.ip)
      try {
        if (credential.scheme === 'key') request.apiKey = await authenticate(db, credential.value)
        else {
          const proof = credential.dpop
            ? {
                proof: request.headers.dpop,
                method: request.method,
                url: `${publicBase(request)}${pathOf(request.url)}`,
              }
            : undefined
          request.bearer = await authenticateBearer(tokens, { value: credential.value, dpop: proof }, dpop.proofs)
        }
      } catch (error) {
        await throttle.failed(request.ip, error)
        throw error
      }
    }
    app.addHook('onRequest', async (request, reply) => {
      if (request.is404) return
      const mode = routeAuth(request)
      if (mode === undefined) return
      const credential = credentialOf(request, tokens !== undefined)
      if (mode === 'public' && !requireKeyEverywhere) {
        // a credential sent to a public endpoint still counts against its own rate
        if (credential) await identify(request, credential).catch(() => undefined)
        return
      }
      // an answer made for a credential, refusals included, is kept by no cache: x-api-key is no
      // credential header to a shared cache (RFC 9111 3.5), so it would hand it on to anyone
      reply.header('cache-control', 'private, no-store')
      addVary(reply, CREDENTIAL_HEADERS)
      if (!credential) throw unauthorized('Not authenticated', bothChallenges)
      await identify(request, credential)
      if (mode === 'key' && request.apiKey && !endpointAllowed(request.apiKey.endpoints, pathOf(request.url))) {
        throw new DetailError(403, 'This API key may not call this endpoint')
      }
      if (mode === 'manage' && request.apiKey && !manageAllowed(request.apiKey.endpoints, pathOf(request.url))) {
        throw new DetailError(
          403,
          `This API key may not change alert rules: it needs a pattern under ${MANAGE_PATH_PREFIX}`,
        )
      }
      // a token is this API's credential only with its scope, on every guarded route: without it,
      // not even /auth/protected says whose it is
      const scope = mode === 'manage' ? MANAGE_ENERGY : READ_ENERGY
      if (request.bearer && !request.bearer.scopes.includes(scope)) {
        throw new DetailError(403, `This access token lacks the ${scope} scope`, {
          headers: {
            'www-authenticate': `Bearer ${REALM}, error="insufficient_scope", scope="${scope}"`,
          },
        })
      }
    })
    // last_used_at is bookkeeping of accepted requests only (a rejected request writes nothing):
    // at most once a minute per key and process, done before the answer goes out so that it is
    // settled when the client sees it; a failure only reaches the log
    app.addHook('onSend', async (request, reply) => {
      const key = request.apiKey
      if (!key || reply.statusCode >= 400) return
      const now = Date.now()
      if ((touched.get(key.id) ?? 0) >= now - 60_000) return
      if (touched.size > 10_000) touched.clear()
      touched.set(key.id, now)
      await touchApiKey(db, key.id).catch((error: unknown) => request.log.warn({ err: error }, 'last_used_at'))
    })
  },
  { name: 'energy-auth', dependencies: ['energy-settings', 'energy-database'] },
)
