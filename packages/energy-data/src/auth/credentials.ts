import type { AttemptCounter } from '@campus/shared'
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

/** An active access token (RFC 6750 3.1 challenges), or why not. */
export async function authenticateBearer(tokens: TokenIntrospector | undefined, value: string): Promise<BearerToken> {
  if (!tokens) throw unauthorized('Bearer tokens are not accepted here: use x-api-key')
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
