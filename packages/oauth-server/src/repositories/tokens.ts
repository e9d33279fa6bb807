import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely'
import type { ChangeTransaction } from '../changes/commit.ts'
import type { OAuthDB, User } from '../db/schema.ts'

export type Db = Kysely<OAuthDB> | Transaction<OAuthDB>

/**
 * The digests of a new access token (and refresh token) and how long the access token lives:
 * values, or (for a source yielding several rows) SQL naming the source's columns that hold them.
 */
export interface NewTokens {
  accessDigest: Buffer | RawBuilder<Buffer>
  refreshDigest: Buffer | null | RawBuilder<Buffer | null>
  ttlSeconds: number
  /** the DPoP key the access token is bound to (RFC 9449), and the refresh token's (public clients only) */
  accessJkt: string | null | RawBuilder<string | null>
  refreshJkt: string | null | RawBuilder<string | null>
}

/** Who and what new tokens are for: the columns a token source yields. */
export interface TokenGrant {
  applicationId: number | null
  /** null: a token of the application itself (client credentials) */
  userId: number | null
  scopes: string[]
  grantId: string
}

/** A token source made of the grant's own values (password, refresh and implicit grants). */
export const grantSource = (
  grant: TokenGrant,
): RawBuilder<{ application_id: number | null; user_id: number | null; scopes: string[] }> =>
  sql`select ${grant.applicationId}::int as application_id, ${grant.userId}::int as user_id,
    ${grant.scopes}::text[] as scopes, ${grant.grantId}::uuid as grant_id`

/**
 * The one statement that writes token rows, whatever the grant: an access token (and, with a
 * refresh digest, its refresh token) for each row `source` yields (`application_id`, `user_id`,
 * `scopes`, `grant_id`, and any more columns, returned as they are). One round trip, and atomic
 * with the source itself (a code's consumption): nothing when the source yields no row. Each
 * refresh token and answer row is matched to its access token by the access token's digest.
 */
export async function insertTokenRows<Row extends { scopes: string[]; user_id: number | null }>(
  db: Db,
  source: RawBuilder<Row>,
  tokens: NewTokens,
): Promise<Array<Row & { created_at: Date }>> {
  const result = await sql<Row & { created_at: Date }>`
    with source as (${source}), access as (
      insert into access_tokens (digest, application_id, user_id, scopes, grant_id, expires_at, dpop_jkt)
      select ${tokens.accessDigest}, application_id, user_id, scopes, grant_id,
             now() + make_interval(secs => ${tokens.ttlSeconds}), ${tokens.accessJkt}::text
      from source
      returning id, digest, created_at
    ), refresh as (
      insert into refresh_tokens (digest, application_id, user_id, access_token_id, scopes, grant_id, dpop_jkt)
      select ${tokens.refreshDigest}::bytea, s.application_id, s.user_id, a.id, s.scopes, s.grant_id,
        ${tokens.refreshJkt}::text
      from source s join access a on a.digest = ${tokens.accessDigest} where ${tokens.refreshDigest}::bytea is not null
      returning id
    )
    select s.*, a.created_at from source s join access a on a.digest = ${tokens.accessDigest}`.execute(db)
  return result.rows
}

/** `insertTokenRows` for a source of one row (every grant but a batch of codes). */
export async function insertTokens<Row extends { scopes: string[]; user_id: number | null }>(
  db: Db,
  source: RawBuilder<Row>,
  tokens: NewTokens,
): Promise<(Row & { created_at: Date }) | undefined> {
  return (await insertTokenRows(db, source, tokens))[0]
}

export interface RefreshTokenInfo {
  id: number
  application_id: number | null
  user_id: number
  access_token_id: number
  scopes: string[]
  grant_id: string
  created_at: Date
  rotated_at: Date | null
  revoked_at: Date | null
  dpop_jkt: string | null
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
      'dpop_jkt',
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
  await revokeTokensWhere(db, { grant_id: grantId })
}

/** Which access tokens: a grant's, or a user's for one application. */
type AccessTokenMatch = { grant_id: string } | { user_id: number; application_id: number }

/**
 * Revokes the access tokens `match` selects and the refresh tokens issued with them, revoked or
 * not (an access token revoked by itself leaves its refresh token live). A refresh token is
 * reached through its access token, as it belongs where that token belongs (migration 0008).
 */
export async function revokeTokensWhere(db: ChangeTransaction, match: AccessTokenMatch): Promise<void> {
  await db
    .updateTable('access_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where((eb) => eb.and(match))
    .where('revoked_at', 'is', null)
    .execute()
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where(
      'access_token_id',
      'in',
      db
        .selectFrom('access_tokens')
        .select('id')
        .where((eb) => eb.and(match)),
    )
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
  /** null for a token of the application itself (client credentials) */
  user: User | null
  /**
   * Whoever the token acts for is blocked: its user, or, for a token of the application itself,
   * the user who owns the application. Read through `tokenUsable`, the one rule.
   */
  holder_blocked: boolean
  /** the DPoP key the token is bound to (RFC 9449); null for a bearer token */
  dpop_jkt: string | null
}

/** Whether an active token may act: the one rule of the API, token info and introspection. */
export const tokenUsable = (row: Pick<BearerTokenRow, 'holder_blocked'>): boolean => !row.holder_blocked

/**
 * The hot path of every API call: the access token, its application id and its user, in one
 * query. Expiry is computed by the database clock.
 */
export async function findAccessTokenWithUser(db: Db, digest: Buffer): Promise<BearerTokenRow | undefined> {
  const row = await db
    .selectFrom('access_tokens as t')
    .leftJoin('users as u', 'u.id', 't.user_id')
    .leftJoin('applications as a', 'a.id', 't.application_id')
    .leftJoin('users as owner', 'owner.id', 'a.owner_id')
    .selectAll('u')
    .select([
      't.id as token_id',
      't.application_id',
      'a.uid as application_uid',
      't.scopes',
      't.created_at as token_created_at',
      't.expires_at',
      't.revoked_at',
      't.dpop_jkt',
      sql<number>`floor(extract(epoch from t.expires_at - now()))::int`.as('expires_in'),
      sql<boolean>`coalesce(u.locked, false) or (t.user_id is null and coalesce(owner.locked, false))`.as(
        'holder_blocked',
      ),
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
    holder_blocked,
    dpop_jkt,
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
    user: user.id === null ? null : (user as User),
    holder_blocked,
    dpop_jkt,
  }
}

export interface AnonymousToken {
  id: number
  scopes: string[]
  created_at: Date
  expires_at: Date
}

/**
 * Whose single tokens these are: a user's tokens issued without a client (a password grant with no
 * client authentication), or an application's own tokens, with no user (client credentials).
 * Nobody but that holder (and the token's bearer) can revoke them.
 */
export type TokenHolder = { userId: number } | { applicationId: number }

const heldBy = (holder: TokenHolder) =>
  'userId' in holder
    ? ({ own: 'user_id', id: holder.userId, none: 'application_id' } as const)
    : ({ own: 'application_id', id: holder.applicationId, none: 'user_id' } as const)

/** The holder's live tokens, newest first. */
export async function listHeldTokens(db: Db, holder: TokenHolder): Promise<AnonymousToken[]> {
  const { own, id, none } = heldBy(holder)
  return db
    .selectFrom('access_tokens')
    .select(['id', 'scopes', 'created_at', 'expires_at'])
    .where(own, '=', id)
    .where(none, 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .orderBy('created_at', 'desc')
    .execute()
}

/** Revokes one of the holder's tokens; false when there is no such live token. */
export async function revokeHeldToken(db: ChangeTransaction, holder: TokenHolder, tokenId: number): Promise<boolean> {
  const { own, id, none } = heldBy(holder)
  const row = await db
    .updateTable('access_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', tokenId)
    .where(own, '=', id)
    .where(none, 'is', null)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}
