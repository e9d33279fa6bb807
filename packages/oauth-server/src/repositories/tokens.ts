import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely'
import type { ChangeTransaction } from '../changes/commit.ts'
import type { OAuthDB, User } from '../db/schema.ts'

type Db = Kysely<OAuthDB> | Transaction<OAuthDB>

/** The digests of a new access token (and refresh token) and how long the access token lives. */
export interface NewTokens {
  accessDigest: Buffer
  refreshDigest: Buffer | null
  ttlSeconds: number
}

/** Who and what new tokens are for: the columns a token source yields. */
export interface TokenGrant {
  applicationId: number | null
  userId: number
  scopes: string[]
  grantId: string
}

/** A token source made of the grant's own values (password, refresh and implicit grants). */
export const grantSource = (
  grant: TokenGrant,
): RawBuilder<{ application_id: number | null; user_id: number; scopes: string[] }> =>
  sql`select ${grant.applicationId}::int as application_id, ${grant.userId}::int as user_id,
    ${grant.scopes}::text[] as scopes, ${grant.grantId}::uuid as grant_id`

/**
 * The one statement that writes token rows, whatever the grant: an access token (and, with a
 * refresh digest, its refresh token) for each row `source` yields (`application_id`, `user_id`,
 * `scopes`, `grant_id`, and any more columns, returned as they are). One round trip, and atomic
 * with the source itself (a code's consumption): nothing when the source yields no row.
 */
export async function insertTokens<Row extends { scopes: string[]; user_id: number }>(
  db: Db,
  source: RawBuilder<Row>,
  tokens: NewTokens,
): Promise<(Row & { created_at: Date }) | undefined> {
  const result = await sql<Row & { created_at: Date }>`
    with source as (${source}), access as (
      insert into access_tokens (digest, application_id, user_id, scopes, grant_id, expires_at)
      select ${tokens.accessDigest}, application_id, user_id, scopes, grant_id,
             now() + make_interval(secs => ${tokens.ttlSeconds})
      from source
      returning id, created_at
    ), refresh as (
      insert into refresh_tokens (digest, application_id, user_id, access_token_id, scopes, grant_id)
      select ${tokens.refreshDigest}::bytea, s.application_id, s.user_id, a.id, s.scopes, s.grant_id
      from source s, access a where ${tokens.refreshDigest}::bytea is not null
      returning id
    )
    select s.*, a.created_at from source s, access a`.execute(db)
  return result.rows[0]
}

export interface RefreshTokenInfo {
  id: number
  application_id: number | null
  user_id: number
  access_token_id: number | null
  scopes: string[]
  grant_id: string
  created_at: Date
  rotated_at: Date | null
  revoked_at: Date | null
}

export async function findRefreshToken(db: Db, digest: Buffer): Promise<RefreshTokenInfo | undefined> {
  return db
    .selectFrom('refresh_tokens')
    .select([
      'id',
      'application_id',
      'user_id',
      'access_token_id',
      'scopes',
      'grant_id',
      'created_at',
      'rotated_at',
      'revoked_at',
    ])
    .where('digest', '=', digest)
    .executeTakeFirst()
}

/** Marks a refresh token used; false when it was already rotated or revoked (reuse or a concurrent rotation). */
export async function rotateRefreshToken(db: Db, id: number): Promise<boolean> {
  const row = await db
    .updateTable('refresh_tokens')
    .set({ rotated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('rotated_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

export async function revokeAccessToken(db: ChangeTransaction, id: number): Promise<void> {
  await db
    .updateTable('access_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute()
}

/** Revokes every access and refresh token of one grant (a code's family or a refresh chain). */
export async function revokeGrant(db: ChangeTransaction, grantId: string): Promise<void> {
  await db
    .updateTable('access_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('grant_id', '=', grantId)
    .where('revoked_at', 'is', null)
    .execute()
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('grant_id', '=', grantId)
    .where('revoked_at', 'is', null)
    .execute()
}

export interface BearerTokenRow {
  token_id: number
  application_id: number | null
  application_uid: string | null
  scopes: string[]
  token_created_at: Date
  expires_at: Date
  revoked_at: Date | null
  expires_in: number
  user: User
}

/**
 * The hot path of every API call: the access token, its application id and its user, in one
 * query. Expiry is computed by the database clock.
 */
export async function findAccessTokenWithUser(db: Db, digest: Buffer): Promise<BearerTokenRow | undefined> {
  const row = await db
    .selectFrom('access_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .leftJoin('applications as a', 'a.id', 't.application_id')
    .selectAll('u')
    .select([
      't.id as token_id',
      't.application_id',
      'a.uid as application_uid',
      't.scopes',
      't.created_at as token_created_at',
      't.expires_at',
      't.revoked_at',
      sql<number>`floor(extract(epoch from t.expires_at - now()))::int`.as('expires_in'),
    ])
    .where('t.digest', '=', digest)
    .executeTakeFirst()
  if (!row) return undefined
  const {
    token_id,
    application_id,
    application_uid,
    scopes,
    token_created_at,
    expires_at,
    revoked_at,
    expires_in,
    ...user
  } = row
  return {
    token_id,
    application_id,
    application_uid,
    scopes,
    token_created_at,
    expires_at,
    revoked_at,
    expires_in,
    user: user as User,
  }
}

export interface AnonymousToken {
  id: number
  scopes: string[]
  created_at: Date
  expires_at: Date
}

/**
 * A user's live access tokens issued without a client (a password grant with no client
 * authentication): nobody but the user and the token's holder can revoke them.
 */
export async function listAnonymousTokens(db: Db, userId: number): Promise<AnonymousToken[]> {
  return db
    .selectFrom('access_tokens')
    .select(['id', 'scopes', 'created_at', 'expires_at'])
    .where('user_id', '=', userId)
    .where('application_id', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .orderBy('created_at', 'desc')
    .execute()
}

/** Revokes one of the user's own client-less tokens; false when there is no such live token. */
export async function revokeAnonymousToken(db: ChangeTransaction, userId: number, tokenId: number): Promise<boolean> {
  const row = await db
    .updateTable('access_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', tokenId)
    .where('user_id', '=', userId)
    .where('application_id', 'is', null)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}
