import { randomUUID } from 'node:crypto'
import type { Kysely, Transaction } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'
import { ACCESS_TOKEN_TTL } from '../domain/lifetimes.ts'
import { formatScope } from '../domain/scopes.ts'
import { digest, generateSecret } from '../domain/secrets.ts'
import { insertTokenPair } from '../repositories/tokens.ts'

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

/** Issues an access token, and a refresh token when asked, inside the caller's transaction. */
export async function issueTokens(
  db: Kysely<OAuthDB> | Transaction<OAuthDB>,
  grant: { applicationId: number | null; userId: number; scopes: string[]; grantId: string; refresh: boolean },
): Promise<TokenResponse> {
  const values = newTokenValues(grant.refresh)
  const createdAt = await insertTokenPair(db, {
    accessDigest: digest(values.accessToken),
    refreshDigest: values.refreshToken ? digest(values.refreshToken) : null,
    applicationId: grant.applicationId,
    userId: grant.userId,
    scopes: grant.scopes,
    grantId: grant.grantId,
    ttlSeconds: ACCESS_TOKEN_TTL,
  })
  return tokenResponse(values, grant.scopes, createdAt)
}
