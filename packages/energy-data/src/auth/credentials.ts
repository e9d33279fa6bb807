import {
  type AttemptCounter,
  bindingRefusal,
  createOnceStore,
  DpopProofError,
  type DpopProofs,
  dpopChallenge,
  dpopProofs,
  type OnceStore,
} from '@campus/shared'
import type { Kysely } from 'kysely'
import type { EnergyDatabase } from '../db/schema.ts'
import { digestApiKey, looksLikeApiKey } from '../domain/api-keys.ts'
import { DetailError } from '../errors.ts'
import { type ApiKeyRecord, findApiKeyByDigest } from '../repositories/api-keys.ts'
import { AuthorizationServerUnreachable, type BearerToken, type TokenIntrospector } from './introspection.ts'

/**
 * The credentials of the energy database's services, checked one way for all of them (the data
 * API's guard, the ingest service's writes): an API key by its digest, an access token by
 * introspection at the OAuth server.
 */

export const REALM = 'realm="energy-data"'

/** 401 with the challenge of the scheme that failed, or of every scheme the service accepts. */
export const unauthorized = (detail: string, challenge = 'APIKey') =>
  new DetailError(401, detail, { headers: { 'www-authenticate': challenge } })

/** The key a clear value names, valid now; 401 otherwise. */
export async function authenticate(db: Kysely<EnergyDatabase>, value: string): Promise<ApiKeyRecord> {
  // Lookup by digest: the stored value is never compared with the clear key, so timing tells nothing.
  const key = looksLikeApiKey(value) ? await findApiKeyByDigest(db, digestApiKey(value)) : undefined
  if (!key) throw unauthorized('Invalid API key')
  if (key.revoked_at) throw unauthorized('API key revoked')
  if (key.expires_at && key.expires_at.getTime() <= Date.now()) throw unauthorized('API key expired')
  return key
}

/** An access token as a request carries it. */
export interface PresentedToken {
  value: string
  /** sent as `Authorization: DPoP` (RFC 9449 7.1): its `DPoP` header(s), and the method and URL the proof must name */
  dpop?: { proof: string | string[] | undefined; method: string; url: string } | undefined
}

/** The access token of an `Authorization` header: `Bearer <token>`, or `DPoP <token>` with a proof. */
export function accessTokenOf(authorization: string | undefined): { value: string; dpop: boolean } | undefined {
  const match = authorization === undefined ? null : /^(bearer|dpop) +(\S+)\s*$/i.exec(authorization)
  return match ? { value: match[2] as string, dpop: (match[1] as string).toLowerCase() === 'dpop' } : undefined
}

/** 401 of RFC 9449 7.1: a DPoP challenge naming the error, and the nonce to use when that was why. */
const dpopRefusal = (code: string, description: string, nonce?: string) =>
  new DetailError(401, description, {
    headers: { 'www-authenticate': dpopChallenge({ code, description }), ...(nonce ? { 'dpop-nonce': nonce } : {}) },
  })

/** The proofs a service checks (RFC 9449), their used jti in Redis when configured, so every instance refuses a replay. */
export function resourceProofs(
  redisUrl: string | undefined,
  prefix: string,
  nonceKey: Buffer | undefined,
): { proofs: DpopProofs; once: OnceStore } {
  const once = createOnceStore(redisUrl, prefix)
  return { proofs: dpopProofs({ once, nonceKey }), once }
}

/**
 * An active access token (RFC 6750 3.1 challenges), or why not. A token bound to a DPoP key
 * (`cnf.jkt` at introspection) is taken only as `Authorization: DPoP` with a proof of that key
 * for this request (RFC 9449 7.1), and a DPoP token only when it is bound.
 */
export async function authenticateBearer(
  tokens: TokenIntrospector | undefined,
  presented: PresentedToken,
  proofs: DpopProofs,
): Promise<BearerToken> {
  if (!tokens) throw unauthorized('Bearer tokens are not accepted here: use x-api-key')
  const { value, dpop } = presented
  let proofKey: string | undefined
  if (dpop) {
    try {
      proofKey = (await proofs.verify({ ...dpop, accessToken: value })).jkt
    } catch (error) {
      if (error instanceof DpopProofError) throw dpopRefusal(error.code, error.message, error.nonce)
      throw error
    }
  }
  let token: BearerToken | undefined
  try {
    token = await tokens.check(value)
  } catch (error) {
    if (!(error instanceof AuthorizationServerUnreachable)) throw error
    throw new DetailError(503, 'The OAuth server cannot be reached to check the token; retry later', {
      headers: { 'retry-after': '5' },
      cause: error,
    })
  }
  if (!token) {
    throw unauthorized(
      'Invalid access token',
      `Bearer ${REALM}, error="invalid_token", error_description="The access token is expired, revoked or unknown"`,
    )
  }
  const refusal = bindingRefusal(token.jkt, proofKey)
  if (refusal) throw dpopRefusal(refusal.code, refusal.description)
  return token
}

/**
 * Failed authentications counted per address (the counter is Redis's when configured, so across
 * instances); past `limit` a minute an address is refused with 429 before any check, so bogus keys
 * stop costing lookups and bogus tokens introspections. Valid credentials count nothing.
 */
export function failedAuthentications(counter: AttemptCounter, limit: number) {
  const blockedUntil = new Map<string, number>()
  return {
    /** 429 while the address is refused. */
    check(address: string): void {
      const until = blockedUntil.get(address)
      if (until === undefined || until <= Date.now()) return
      const wait = Math.ceil((until - Date.now()) / 1000)
      throw new DetailError(429, `Too many failed authentications from this address: retry in ${wait} s`, {
        headers: { 'retry-after': String(wait) },
      })
    },
    /** Counts `error` against the address when it is a refused credential (401); the OAuth server out of reach (503) is no failure of the caller's. */
    async failed(address: string, error: unknown): Promise<void> {
      if (!(error instanceof DetailError) || error.statusCode !== 401) return
      const wait = await counter.attempt([[`ip:${address}`, limit]])
      if (wait === undefined) return
      if (blockedUntil.size > 10_000) blockedUntil.clear()
      blockedUntil.set(address, Date.now() + wait * 1000)
    },
  }
}
