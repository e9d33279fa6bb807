/**
 * Which answers a script on another origin may read: GitLab's rules (`config/application.rb`,
 * its Rack::Cors block), so a single-page application can run code + PKCE, refresh, revoke and
 * call the API from the browser. Always any origin and never credentials: the caller sends its
 * token, no cookie. The pages (sign-in, consent, profile, admin) answer no other origin.
 */
import { type CorsPolicies, type CorsPolicy, PROTECTED_RESOURCE_PATH } from '@campus/shared'
import { JWKS_PATH, USERINFO_PATH } from './discovery.ts'

/** Response headers GitLab exposes on `/api/*` that this API sends (its pagination set and ids). */
const API_EXPOSED_HEADERS = [
  'Link',
  'X-Total',
  'X-Total-Pages',
  'X-Per-Page',
  'X-Page',
  'X-Next-Page',
  'X-Prev-Page',
  'X-Request-Id',
  'ETag',
  // RFC 9449 7.1 and 8.2: a browser client reads the challenge and the nonce to retry with
  'WWW-Authenticate',
  'DPoP-Nonce',
]

/** GitLab lists axios' defaults besides Authorization (client authentication by HTTP Basic). */
const TOKEN_ENDPOINT: CorsPolicy = {
  origins: '*',
  methods: ['POST'],
  allowedHeaders: ['Authorization', 'X-CSRF-Token', 'X-Requested-With', 'DPoP'],
  exposedHeaders: ['DPoP-Nonce'],
}

/** A resource taking a token in the Authorization header, bearer or DPoP (RFC 9449). */
const resource = (methods: string[]): CorsPolicy => ({
  origins: '*',
  methods,
  allowedHeaders: ['Authorization', 'DPoP'],
  exposedHeaders: ['WWW-Authenticate', 'DPoP-Nonce'],
})

const EXACT: Record<string, CorsPolicy> = {
  '/oauth/token': TOKEN_ENDPOINT,
  '/oauth/revoke': TOKEN_ENDPOINT,
  // RFC 9126: a browser client pushes its request as it redeems its code
  '/oauth/par': TOKEN_ENDPOINT,
  // RFC 7591: a browser client may register itself (JSON, so a preflight)
  '/oauth/register': { origins: '*', methods: ['POST'], allowedHeaders: ['Authorization', 'Content-Type'] },
  '/oauth/token/info': resource(['GET', 'HEAD']),
  [USERINFO_PATH]: resource(['GET', 'HEAD', 'POST']),
  // discovery documents and keys: simple GETs, no request header to allow
  [JWKS_PATH]: { origins: '*', methods: ['GET', 'HEAD'], allowedHeaders: [] },
  '/.well-known/openid-configuration': { origins: '*', methods: ['GET', 'HEAD'], allowedHeaders: [] },
  // RFC 8414 metadata: not in GitLab's list, but what a browser client such as oauth4webapi discovers first
  '/.well-known/oauth-authorization-server': { origins: '*', methods: ['GET', 'HEAD'], allowedHeaders: [] },
  // RFC 9728: what a client that met a 401 of the API reads next
  [PROTECTED_RESOURCE_PATH]: { origins: '*', methods: ['GET', 'HEAD'], allowedHeaders: [] },
}

/** Any header, any method, for every `/api/` path. */
const API: CorsPolicy = {
  origins: '*',
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  exposedHeaders: API_EXPOSED_HEADERS,
}

export const oauthCorsPolicies: CorsPolicies = (path) => EXACT[path] ?? (path.startsWith('/api/') ? API : undefined)
