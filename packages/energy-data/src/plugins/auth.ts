import type { FastifyRequest, FastifySchema } from 'fastify'
import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import Type from 'typebox'
import type { EnergyDatabase } from '../db/schema.ts'
import { digestApiKey, endpointAllowed, looksLikeApiKey } from '../domain/api-keys.ts'
import type { EnergyApp } from '../energy-app.ts'
import { DetailError } from '../errors.ts'
import { type ApiKeyRecord, findApiKeyByDigest, touchApiKey } from '../repositories/api-keys.ts'
import { keyErrorResponses } from '../schemas/errors.ts'

/**
 * How a route is guarded, declared in its options as `config: { auth: ... }`:
 * - `'key'` (the default for every route that says nothing): an `x-api-key` whose endpoint
 *   patterns cover the request path; 401 without a valid key, 403 outside its patterns.
 * - `'key-any-endpoint'`: any valid key (the /auth checks, which only look at the key).
 * - `'public'`: no key, unless ENERGY_REQUIRE_KEY_EVERYWHERE is set; rate limited per address.
 * The platform's own routes (front door and icon, health, docs, OpenAPI, metrics) are never guarded.
 */
export type RouteAuth = 'key' | 'key-any-endpoint' | 'public'

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
  }
}

/** What a key-protected route declares in its schema: the header and the OpenAPI security entry. */
export const apiKeyHeaders = Type.Object({
  'x-api-key': Type.String({ description: 'API key (`pnpm energy key:create`)' }),
})
export const apiKeySecurity = [{ APIKeyHeader: [] }]

export const apiKeySecurityScheme = {
  APIKeyHeader: { type: 'apiKey' as const, in: 'header' as const, name: 'x-api-key' },
}

const INFRASTRUCTURE = /^\/($|favicon\.ico$|health\/|docs|openapi\.json|metrics)/

/** The guard a route runs under; undefined for the platform's own routes. */
export function routeAuth(request: FastifyRequest): RouteAuth | undefined {
  const declared = request.routeOptions.config.auth
  if (declared) return declared
  const url = request.routeOptions.url
  if (url === undefined || INFRASTRUCTURE.test(url)) return undefined
  return 'key'
}

const unauthorized = (detail: string) => new DetailError(401, detail, { headers: { 'www-authenticate': 'APIKey' } })

async function authenticate(db: Kysely<EnergyDatabase>, header: string | string[] | undefined): Promise<ApiKeyRecord> {
  if (header === undefined || header === '') throw unauthorized('Not authenticated')
  const value = Array.isArray(header) ? header[0] : header
  // Lookup by digest: the stored value is never compared with the clear key, so timing tells nothing.
  const key = value && looksLikeApiKey(value) ? await findApiKeyByDigest(db, digestApiKey(value)) : undefined
  if (!key) throw unauthorized('Invalid API key')
  if (key.revoked_at) throw unauthorized('API key revoked')
  if (key.expires_at && key.expires_at.getTime() <= Date.now()) throw unauthorized('API key expired')
  return key
}

/** The API's endpoints a key may call: its patterns' matches, the key-only checks and the public ones. */
export function endpointsForKey(catalog: Readonly<EndpointCatalog>, key: ApiKeyRecord): string[] {
  return catalog
    .filter((e) => e.auth !== 'key' || endpointAllowed(key.endpoints, e.path))
    .map((e) => e.path)
    .sort()
}

/**
 * The answers the guards (this plugin and the rate limit) can give, added to a route's response
 * schemas where it does not declare them, so that the OpenAPI document lists every status.
 */
function declareGuardResponses(schema: FastifySchema | undefined, auth: RouteAuth, requireKeyEverywhere: boolean) {
  const responses = schema?.response as Record<string, unknown> | undefined
  if (!responses) return
  const keyed = auth !== 'public' || requireKeyEverywhere
  const guard: Record<string, unknown> = keyed
    ? { 401: keyErrorResponses[401], 403: keyErrorResponses[403], 429: keyErrorResponses[429] }
    : { 429: keyErrorResponses[429] }
  for (const [status, body] of Object.entries(guard)) responses[status] ??= body
}

/**
 * Decorates `endpointCatalog`; checks `x-api-key` before anything else runs (no validation detail
 * leaks to anonymous callers) on every route registered after it.
 */
export const authPlugin = fp(
  async (app) => {
    const { db, settings } = app as EnergyApp
    const { requireKeyEverywhere } = settings
    const catalog: EndpointCatalog = []
    const touched = new Map<number, number>()
    app.decorate('endpointCatalog', catalog)
    app.addHook('onRoute', (route) => {
      const url = route.url ?? route.path
      if (!url || INFRASTRUCTURE.test(url) || route.method === 'HEAD' || route.schema?.hide) return
      const path = url.replace(/:(\w+)/g, '{$1}')
      const auth = route.config?.auth ?? 'key'
      if (!catalog.some((e) => e.path === path)) catalog.push({ path, auth })
      declareGuardResponses(route.schema, auth, requireKeyEverywhere)
    })
    app.addHook('onRequest', async (request) => {
      if (request.is404) return
      const mode = routeAuth(request)
      if (mode === undefined) return
      if (mode === 'public' && !requireKeyEverywhere) {
        // a key sent to a public endpoint still counts against that key's own rate
        const header = request.headers['x-api-key']
        if (header) request.apiKey = await authenticate(db, header).catch(() => undefined)
        return
      }
      const key = await authenticate(db, request.headers['x-api-key'])
      request.apiKey = key
      if (mode === 'key' && !endpointAllowed(key.endpoints, request.url.split('?')[0] ?? '')) {
        throw new DetailError(403, 'This API key may not call this endpoint')
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
