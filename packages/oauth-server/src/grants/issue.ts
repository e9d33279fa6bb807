import { randomUUID } from 'node:crypto'
import type { Kysely, Transaction } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'
import { ACCESS_TOKEN_TTL } from '../domain/lifetimes.ts'
import { formatScope } from '../domain/scopes.ts'
import { digest, generateSecret } from '../domain/secrets.ts'
import { type CodeAttempt, type RedeemedCode, redeemAuthorizationCode } from '../repositories/codes.ts'
import { redeemDeviceGrant } from '../repositories/device-grants.ts'
import { grantSource, insertTokens, type NewTokens, type TokenGrant } from '../repositories/tokens.ts'

/** The token endpoint's success body (RFC 6749 5.1, GitLab's fields). */
export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token?: string
  scope: string
  created_at: number
  /** OpenID Connect, when the scopes include openid */
  id_token?: string
}

export const newGrantId = (): string => randomUUID()

/** New token strings; only their digests are stored. */
export function newTokenValues(refresh: boolean): { accessToken: string; refreshToken: string | undefined } {
  return {
    accessToken: generateSecret('accessToken'),
    refreshToken: refresh ? generateSecret('refreshToken') : undefined,
  }
}

export function tokenResponse(
  values: { accessToken: string; refreshToken: string | undefined },
  scopes: string[],
  createdAt: Date,
): TokenResponse {
  return {
    access_token: values.accessToken,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL,
    ...(values.refreshToken ? { refresh_token: values.refreshToken } : {}),
    scope: formatScope(scopes),
    created_at: Math.floor(createdAt.getTime() / 1000),
  }
}

/** Fresh token values and the digests that are stored of them. */
function newTokens(refresh: boolean) {
  const values = newTokenValues(refresh)
  const digests: NewTokens = {
    accessDigest: digest(values.accessToken),
    refreshDigest: values.refreshToken ? digest(values.refreshToken) : null,
    ttlSeconds: ACCESS_TOKEN_TTL,
  }
  return { values, digests }
}

/**
 * Issues an access token, and a refresh token when asked, inside the caller's transaction (the
 * password, refresh and implicit grants); `redeemCode` is the same path for a code.
 */
export async function issueTokens(
  db: Kysely<OAuthDB> | Transaction<OAuthDB>,
  grant: TokenGrant & { refresh: boolean },
): Promise<TokenResponse> {
  const { values, digests } = newTokens(grant.refresh)
  const row = await insertTokens(db, grantSource(grant), digests)
  if (!row) throw new Error('the token insert yielded no row')
  return tokenResponse(values, grant.scopes, row.created_at)
}

/** Redeems a code for tokens in one statement; undefined when a binding rule refused it. */
export async function redeemCode(
  db: Kysely<OAuthDB>,
  attempt: CodeAttempt,
  refresh: boolean,
): Promise<{ response: TokenResponse; code: RedeemedCode } | undefined> {
  const { values, digests } = newTokens(refresh)
  const code = await redeemAuthorizationCode(db, attempt, digests)
  return code ? { response: tokenResponse(values, code.scopes, code.createdAt), code } : undefined
}

/** Redeems an approved device grant (RFC 8628 3.5) for tokens in one statement; undefined when it was not. */
export async function redeemDevice(
  trx: Transaction<OAuthDB>,
  deviceCodeDigest: Buffer,
): Promise<TokenResponse | undefined> {
  const { values, digests } = newTokens(true)
  const row = await redeemDeviceGrant(trx, deviceCodeDigest, digests)
  return row ? tokenResponse(values, row.scopes, row.created_at) : undefined
}
