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
}

export const newGrantId = (): string => randomUUID()

/** Issues an access token, and a refresh token when asked, inside the caller's transaction. */
export async function issueTokens(
  db: Kysely<OAuthDB> | Transaction<OAuthDB>,
  grant: { applicationId: number | null; userId: number; scopes: string[]; grantId: string; refresh: boolean },
): Promise<TokenResponse> {
  const accessToken = generateSecret('accessToken')
  const refreshToken = grant.refresh ? generateSecret('refreshToken') : undefined
  const createdAt = await insertTokenPair(db, {
    accessDigest: digest(accessToken),
    refreshDigest: refreshToken ? digest(refreshToken) : null,
    applicationId: grant.applicationId,
    userId: grant.userId,
    scopes: grant.scopes,
    grantId: grant.grantId,
    ttlSeconds: ACCESS_TOKEN_TTL,
  })
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    scope: formatScope(grant.scopes),
    created_at: Math.floor(createdAt.getTime() / 1000),
  }
}
