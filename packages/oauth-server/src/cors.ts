/**
 * Which answers a script on another origin may read: GitLab's rules (`config/application.rb`,
 * its Rack::Cors block), so a single-page application can run code + PKCE, refresh, revoke and
 * call the API from the browser. Always any origin and never credentials: the caller sends its
 * token, no cookie. The pages (sign-in, consent, profile, admin) answer no other origin.
 */
import type { CorsPolicies, CorsPolicy } from '@campus/shared'
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
]

/** GitLab lists axios' defaults besides Authorization (client authentication by HTTP Basic). */
const TOKEN_ENDPOINT: CorsPolicy = {
  origins: '*',
  methods: ['POST'],
  allowedHeaders: ['Authorization', 'X-CSRF-Token', 'X-Requested-With'],
}

const EXACT: Record<string, CorsPolicy> = {
  '/oauth/token': TOKEN_ENDPOINT,
  '/oauth/revoke': TOKEN_ENDPOINT,
  '/oauth/token/info': { origins: '*', methods: ['GET', 'HEAD'], allowedHeaders: ['Authorization'] },
  [USERINFO_PATH]: { origins: '*', methods: ['GET', 'HEAD', 'POST'], allowedHeaders: ['Authorization'] },
  // discovery documents and keys: simple GETs, no request header to allow
  [JWKS_PATH]: { origins: '*', methods: ['GET', 'HEAD'], allowedHeaders: [] },
  '/.well-known/openid-configuration': { origins: '*', methods: ['GET', 'HEAD'], allowedHeaders: [] },
  // RFC 8414 metadata: not in GitLab's list, but what a browser client such as oauth4webapi discovers first
  '/.well-known/oauth-authorization-server': { origins: '*', methods: ['GET', 'HEAD'], allowedHeaders: [] },
}

/** Any header, any method, for every `/api/` path. */
const API: CorsPolicy = {
  origins: '*',
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  exposedHeaders: API_EXPOSED_HEADERS,
}

export const oauthCorsPolicies: CorsPolicies = (path) => EXACT[path] ?? (path.startsWith('/api/') ? API : undefined)
