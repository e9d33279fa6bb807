/**
 * Bearer tokens of the OAuth server, checked by RFC 7662 introspection (oauth4webapi), the data
 * API authenticating as a confidential client registered as a resource server there.
 *
 * The answers are cached by the token's SHA-256 (the token itself is kept nowhere):
 * - an active token for `cacheSeconds`: a revocation or a locked account reaches this service
 *   within that bound;
 * - an inactive one for at most a second, so that garbage cannot flood the OAuth server while a
 *   token is never refused for long by an answer that has changed;
 * - when the OAuth server cannot be reached, an active answer younger than `staleSeconds` is
 *   used again (and the token's own expiry still holds); without one, the caller answers 503.
 * Concurrent requests with one token share one introspection.
 */
import { createHash } from 'node:crypto'
import * as oauth from 'oauth4webapi'

export interface IntrospectionSettings {
  /** The OAuth server's issuer identifier; its RFC 8414 metadata names the introspection endpoint. */
  issuer: string
  /** Where to reach the OAuth server when not at the issuer URL (a container network). */
  reachAt?: string
  clientId: string
  clientSecret: string
  /** The public application the dashboard and Swagger UI sign people in with (code + PKCE); none: no sign-in. */
  browserClientId?: string
  /** How long an active answer is trusted: the bound on revocation. */
  cacheSeconds: number
  /** How long an active answer may serve while the OAuth server cannot be reached. */
  staleSeconds: number
  /** Key of the DPoP nonces this service asks for (RFC 9449 9); none: proofs need no nonce. */
  dpopNonceKey?: Buffer | undefined
}

/** What the data API knows of an active token. */
export interface BearerToken {
  scopes: string[]
  /** the application the token was issued to */
  clientId: string | undefined
  /** the user; undefined for a token of no user (client credentials) */
  username: string | undefined
  /** a stable, non-secret name of the token for rate limits (part of its digest) */
  id: string
  /** epoch milliseconds, when the OAuth server said */
  expiresAt: number | undefined
  /** the DPoP key the token is bound to (`cnf.jkt`, RFC 9449 6.2); undefined for a bearer token */
  jkt: string | undefined
}

/** The OAuth server gave no answer and no recent answer can stand in for it. */
export class AuthorizationServerUnreachable extends Error {}

interface Entry {
  token: BearerToken | undefined
  fetchedAt: number
}

const NEGATIVE_MS = 1000
const MAX_ENTRIES = 10_000
const REQUEST_TIMEOUT_MS = 2000
/** After a failed attempt, requests within this span use a recent answer without retrying. */
const RETRY_MS = 1000

export class TokenIntrospector {
  readonly #settings: IntrospectionSettings
  readonly #now: () => number
  readonly #cache = new Map<string, Entry>()
  readonly #inflight = new Map<string, Promise<BearerToken | undefined>>()
  readonly #client: oauth.Client
  readonly #auth: oauth.ClientAuth
  readonly #insecure: boolean
  #server: oauth.AuthorizationServer | undefined
  #failedAt = Number.NEGATIVE_INFINITY

  constructor(settings: IntrospectionSettings, now: () => number = Date.now) {
    this.#settings = settings
    this.#now = now
    this.#client = { client_id: settings.clientId }
    this.#auth = oauth.ClientSecretBasic(settings.clientSecret)
    this.#insecure = new URL(settings.reachAt ?? settings.issuer).protocol === 'http:'
  }

  /** The token's state: what it may do, or undefined when it is not active. */
  async check(token: string): Promise<BearerToken | undefined> {
    const key = createHash('sha256').update(token).digest('base64url')
    const now = this.#now()
    const entry = this.#cache.get(key)
    if (entry && now - entry.fetchedAt < (entry.token ? this.#settings.cacheSeconds * 1000 : NEGATIVE_MS)) {
      return live(entry.token, now)
    }
    if (entry?.token && now - this.#failedAt < RETRY_MS && now - entry.fetchedAt < this.#settings.staleSeconds * 1000) {
      return live(entry.token, now)
    }
    let pending = this.#inflight.get(key)
    if (!pending) {
      pending = this.#refresh(key, token, entry).finally(() => this.#inflight.delete(key))
      this.#inflight.set(key, pending)
    }
    return pending
  }

  async #refresh(key: string, token: string, previous: Entry | undefined): Promise<BearerToken | undefined> {
    let answer: BearerToken | undefined
    try {
      answer = await this.#introspect(key, token)
    } catch (error) {
      this.#failedAt = this.#now()
      const now = this.#now()
      if (previous?.token && now - previous.fetchedAt < this.#settings.staleSeconds * 1000) {
        return live(previous.token, now)
      }
      throw new AuthorizationServerUnreachable(`token introspection failed: ${(error as Error).message}`)
    }
    if (this.#cache.size >= MAX_ENTRIES) this.#cache.delete(this.#cache.keys().next().value as string)
    this.#cache.delete(key)
    this.#cache.set(key, { token: answer, fetchedAt: this.#now() })
    return answer
  }

  async #introspect(key: string, token: string): Promise<BearerToken | undefined> {
    const options = { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), [oauth.allowInsecureRequests]: this.#insecure }
    const server = this.#server ?? (await this.#discover(options))
    const response = await oauth.introspectionRequest(server, this.#client, this.#auth, token, options)
    const result = await oauth.processIntrospectionResponse(server, this.#client, response)
    if (!result.active) return undefined
    return {
      scopes: typeof result.scope === 'string' ? result.scope.split(' ').filter(Boolean) : [],
      clientId: result.client_id,
      username: result.username,
      id: key.slice(0, 16),
      expiresAt: typeof result.exp === 'number' ? result.exp * 1000 : undefined,
      jkt: typeof result.cnf?.jkt === 'string' ? result.cnf.jkt : undefined,
    }
  }

  async #discover(options: oauth.DiscoveryRequestOptions): Promise<oauth.AuthorizationServer> {
    const { issuer, reachAt } = this.#settings
    const response = await oauth.discoveryRequest(new URL(reachAt ?? issuer), { ...options, algorithm: 'oauth2' })
    // the metadata must name the configured issuer, wherever it was fetched from
    const metadata = await oauth.processDiscoveryResponse(new URL(issuer), response)
    const endpoint = metadata.introspection_endpoint
    const server =
      reachAt && endpoint?.startsWith(issuer)
        ? { ...metadata, introspection_endpoint: reachAt + endpoint.slice(issuer.length) }
        : metadata
    this.#server = server
    return server
  }
}

/** A cached answer, unless the token has expired since. */
function live(token: BearerToken | undefined, now: number): BearerToken | undefined {
  return token && (token.expiresAt === undefined || token.expiresAt > now) ? token : undefined
}
