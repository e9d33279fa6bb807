/**
 * Who calls /api/v4: an OAuth access token (`?access_token=`, `Authorization: Bearer`,
 * `?bearer_token=`) or a personal access token (`?private_token=`, `PRIVATE-TOKEN`, or any of
 * the former). GitLab's answers: nothing sent -> 401 {"message":"401 Unauthorized"}; bad token ->
 * 401 invalid_token (RFC 6750); a scope missing -> 403 insufficient_scope naming the scopes that
 * would do. A token bound to a DPoP key (RFC 9449) comes as `Authorization: DPoP` with a proof
 * signed by that key, and only so.
 */
import { bindingRefusal, DpopProofError, pathOf } from '@campus/shared'
import type { FastifyRequest } from 'fastify'
import type { User } from './db/schema.ts'
import { digest, PREFIX } from './domain/secrets.ts'
import {
  ApiError,
  DpopTokenRefused,
  InsufficientScope,
  InvalidToken,
  type OAuthError,
  Unauthenticated,
} from './errors.ts'
import type { OAuthServices } from './oauth-app.ts'
import { findPersonalAccessToken, touchPersonalAccessToken } from './repositories/personal-access-tokens.ts'
import { type BearerTokenRow, findAccessTokenWithUser } from './repositories/tokens.ts'
import { findUserById } from './repositories/users.ts'

export interface Principal {
  user: User
  scopes: string[]
  kind: 'oauth' | 'personal_access_token'
}

export const TOKEN_INVALID = 'The access token is invalid'
export const TOKEN_EXPIRED = 'Token is expired. You can either do re-authorization or token refresh.'
export const TOKEN_REVOKED = 'Token was revoked. You have to re-authorize from the user.'

export const TOKEN_DESCRIPTIONS = { invalid: TOKEN_INVALID, revoked: TOKEN_REVOKED, expired: TOKEN_EXPIRED } as const

export type TokenLookup =
  | { status: 'active'; row: BearerTokenRow; expiresIn: number }
  | { status: 'invalid' | 'revoked' | 'expired' }

type CachedToken = { row: BearerTokenRow; expiresAt: number }

/**
 * An OAuth access token's state, through the short-lived cache (only live tokens are cached).
 * A cached token is answered at once, without a promise: every API request comes this way.
 */
export function lookupAccessToken(
  services: Pick<OAuthServices, 'db' | 'changes'>,
  token: string,
): TokenLookup | Promise<TokenLookup> {
  // keyed by the token as presented: its SHA-256 was the largest cost of a cached lookup. The
  // text stays in this process's memory for the cache's seconds, as the request's own headers do
  const cached = services.changes.tokens.get(token)
  return cached && !services.changes.syncing ? stateOf(cached) : lookupThrough(services, token, cached)
}

async function lookupThrough(
  services: Pick<OAuthServices, 'db' | 'changes'>,
  token: string,
  found: CachedToken | undefined,
): Promise<TokenLookup> {
  const { tokens } = services.changes
  let cached = found
  if (cached) {
    // a revocation committed elsewhere just before this request must not be missed
    await services.changes.sync()
    cached = tokens.get(token)
  }
  if (!cached) {
    const row = await findAccessTokenWithUser(services.db, digest(token))
    if (!row) return { status: 'invalid' }
    if (row.revoked_at) return { status: 'revoked' }
    cached = { row, expiresAt: Date.now() + row.expires_in * 1000 }
    tokens.set(token, cached)
  }
  return stateOf(cached)
}

function stateOf(cached: CachedToken): TokenLookup {
  const expiresIn = Math.floor((cached.expiresAt - Date.now()) / 1000)
  return expiresIn > 0 ? { status: 'active', row: cached.row, expiresIn } : { status: 'expired' }
}

/** What an authenticated request needs of the server. */
export type ResourceServices = Pick<OAuthServices, 'db' | 'changes' | 'dpop' | 'settings'>

interface Presented {
  token: string
  personal: boolean
  /** sent as `Authorization: DPoP` (RFC 9449 7.1) */
  dpop: boolean
}

/** An OAuth access token as a request carries it. */
export interface OAuthCredential {
  token: string
  dpop: boolean
}

function single(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * The OAuth token of a request where GitLab looks for it (Doorkeeper's access_token_methods in
 * config/initializers/doorkeeper.rb): the `access_token` parameter, the `Authorization: Bearer`
 * header, then the `bearer_token` parameter.
 */
export function oauthTokenOf(request: FastifyRequest): OAuthCredential | undefined {
  const query = request.query as Record<string, unknown> | undefined
  const authorization = request.headers.authorization
  const dpop = authorization && /^dpop /i.test(authorization) ? single(authorization.slice(5).trim()) : undefined
  // RFC 9449 7.1: a DPoP-bound token travels in the header only
  if (dpop) return { token: dpop, dpop: true }
  const header = authorization && /^bearer /i.test(authorization) ? single(authorization.slice(7).trim()) : undefined
  const token = single(query?.access_token) ?? header ?? single(query?.bearer_token)
  return token === undefined ? undefined : { token, dpop: false }
}

/**
 * The proof of a request sent as `Authorization: DPoP`: the thumbprint of the key that signed it
 * for this method, URL (on the issuer) and token; else a 401 with a DPoP challenge.
 */
export async function proofKeyOf(request: FastifyRequest, services: ResourceServices, token: string): Promise<string> {
  try {
    const { jkt } = await services.dpop.verify({
      proof: request.headers.dpop,
      method: request.method,
      url: `${services.settings.issuer}${pathOf(request.url)}`,
      accessToken: token,
    })
    return jkt
  } catch (error) {
    if (error instanceof DpopProofError) throw DpopTokenRefused.of(error)
    throw error
  }
}

/** The binding rule (`bindingRefusal` of the shared DPoP module) as this server's error. */
export function bindingError(
  row: Pick<BearerTokenRow, 'dpop_jkt'>,
  proofKey: string | undefined,
): OAuthError | undefined {
  const refusal = bindingRefusal(row.dpop_jkt, proofKey)
  return refusal && new DpopTokenRefused(refusal.code, refusal.description)
}

/**
 * The credential of a request, in GitLab's order (lib/gitlab/auth/auth_finders.rb): an OAuth
 * token where Doorkeeper finds one, else a personal access token from `private_token`,
 * `PRIVATE-TOKEN` or those same places (told apart by their prefix).
 */
export function presentedToken(request: FastifyRequest): Presented | undefined {
  const query = request.query as Record<string, unknown> | undefined
  const oauth = oauthTokenOf(request)
  if (oauth && (oauth.dpop || !oauth.token.startsWith(PREFIX.personalAccessToken))) {
    return { token: oauth.token, personal: false, dpop: oauth.dpop }
  }
  const personal = single(query?.private_token) ?? single(request.headers['private-token']) ?? oauth?.token
  return personal ? { token: personal, personal: true, dpop: false } : undefined
}

/** Principals found before the body was read (`authenticatedFirst`). */
const early = new WeakMap<FastifyRequest, Principal>()

/**
 * Route options of a route that takes a body or parameters: the caller is known before they are
 * read, so a signed-out request is 401 whatever it carries (GitLab's Grape runs `authenticate!`
 * in `before`, ahead of parameter validation).
 */
export function authenticatedFirst(services: ResourceServices) {
  return {
    onRequest: async (request: FastifyRequest) => {
      early.set(request, await authenticate(request, services))
    },
  }
}

/** The request's principal; at once, without a promise, for a cached OAuth token (see `lookupAccessToken`). */
export function authenticate(request: FastifyRequest, services: ResourceServices): Principal | Promise<Principal> {
  const known = early.get(request)
  if (known) return known
  const presented = presentedToken(request)
  if (!presented) throw new Unauthenticated()
  if (presented.personal) return personalPrincipal(services, presented.token)
  if (presented.dpop) return dpopPrincipal(request, services, presented.token)
  const lookup = lookupAccessToken(services, presented.token)
  return lookup instanceof Promise ? lookup.then((found) => oauthPrincipal(found)) : oauthPrincipal(lookup)
}

async function dpopPrincipal(request: FastifyRequest, services: ResourceServices, token: string): Promise<Principal> {
  const proofKey = await proofKeyOf(request, services, token)
  return oauthPrincipal(await lookupAccessToken(services, token), proofKey)
}

/**
 * `answer` of the request's principal: at once for a cached OAuth token, so a route handler
 * that returns it answers without a promise or a turn of the microtask queue; else when the
 * lookup ends. A refusal is thrown (at once) or rejected, as `authenticate` does.
 */
export function withPrincipal<T>(
  request: FastifyRequest,
  services: ResourceServices,
  answer: (principal: Principal) => T,
): T | Promise<T> {
  const principal = authenticate(request, services)
  return principal instanceof Promise ? principal.then(answer) : answer(principal)
}

async function personalPrincipal(services: Pick<OAuthServices, 'db'>, token: string): Promise<Principal> {
  const pat = await findPersonalAccessToken(services.db, digest(token))
  if (!pat) throw new InvalidToken(TOKEN_INVALID)
  if (pat.revoked_at) throw new InvalidToken(TOKEN_REVOKED)
  if (pat.expired) throw new InvalidToken(TOKEN_EXPIRED)
  const user = await findUserById(services.db, pat.user_id)
  if (!user) throw new InvalidToken(TOKEN_INVALID)
  await touchPersonalAccessToken(services.db, pat.id)
  return unlessBlocked({ user, scopes: pat.scopes, kind: 'personal_access_token' })
}

function oauthPrincipal(lookup: TokenLookup, proofKey?: string): Principal {
  if (lookup.status !== 'active') throw new InvalidToken(TOKEN_DESCRIPTIONS[lookup.status])
  const refusal = bindingError(lookup.row, proofKey)
  if (refusal) throw refusal
  // a token of an application itself (client credentials) is nobody on the users' API (GitLab's api_guard)
  if (!lookup.row.user) throw new InvalidToken(TOKEN_INVALID)
  return unlessBlocked({ user: lookup.row.user, scopes: lookup.row.scopes, kind: 'oauth' })
}

function unlessBlocked(principal: Principal): Principal {
  if (principal.user.locked) throw new ApiError(403, '403 Forbidden - Your account has been blocked.')
  return principal
}

/** Passes when the principal holds any of `accepted`. */
export function requireScope(principal: Principal, accepted: readonly string[]): void {
  if (!accepted.some((s) => principal.scopes.includes(s))) throw new InsufficientScope(accepted.join(' '))
}
