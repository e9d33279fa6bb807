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
