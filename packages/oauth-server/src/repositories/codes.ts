import { type Kysely, sql, type Transaction } from 'kysely'
import type { AuthorizationCode, OAuthDB } from '../db/schema.ts'

type Db = Kysely<OAuthDB> | Transaction<OAuthDB>

export interface NewCode {
  digest: Buffer
  applicationId: number
  userId: number
  redirectUri: string
  scopes: string[]
  codeChallenge: string | null
  codeChallengeMethod: string | null
  grantId: string
  ttlSeconds: number
  nonce?: string | null
  authTime?: Date | null
}

export async function insertAuthorizationCode(db: Db, code: NewCode): Promise<void> {
  await db
    .insertInto('authorization_codes')
    .values({
      digest: code.digest,
      application_id: code.applicationId,
      user_id: code.userId,
      redirect_uri: code.redirectUri,
      scopes: code.scopes,
      code_challenge: code.codeChallenge,
      code_challenge_method: code.codeChallengeMethod,
      grant_id: code.grantId,
      nonce: code.nonce ?? null,
      auth_time: code.authTime ?? null,
      expires_at: sql<Date>`now() + make_interval(secs => ${code.ttlSeconds})`,
    })
    .execute()
}

/** The code with this digest, consumed or not, with whether it has expired by the database clock. */
export async function findAuthorizationCode(
  db: Db,
  digest: Buffer,
): Promise<(AuthorizationCode & { expired: boolean }) | undefined> {
  return db
    .selectFrom('authorization_codes')
    .selectAll()
    .select(sql<boolean>`expires_at <= now()`.as('expired'))
    .where('digest', '=', digest)
    .executeTakeFirst()
}

/** Codes past their lifetime are of no use, consumed or not (replay detection ends with them). */
export async function deleteExpiredAuthorizationCodes(db: Db): Promise<void> {
  await db.deleteFrom('authorization_codes').where('expires_at', '<', sql<Date>`now() - interval '1 day'`).execute()
}

export interface RedeemedCode {
  createdAt: Date
  scopes: string[]
  userId: number
  nonce: string | null
  authTime: Date | null
}

/**
 * Redeems a code in one statement (one round trip, atomic): the update matches only an unused,
 * unexpired code bound to this client, redirect URI and PKCE verifier, takes its row lock and
 * inserts the tokens. Of two concurrent redemptions only one finds `consumed_at is null`.
 * Returns the tokens' creation time and scopes, or undefined when nothing matched (the caller then finds out why).
 */
export async function redeemAuthorizationCode(
  db: Db,
  input: {
    digest: Buffer
    applicationId: number
    redirectUri: string
    /** the verifier as sent, and its S256 transform */
    verifier: string | null
    verifierS256: string | null
    accessDigest: Buffer
    refreshDigest: Buffer | null
    ttlSeconds: number
  },
): Promise<RedeemedCode | undefined> {
  const result = await sql<{
    created_at: Date
    scopes: string[]
    user_id: number
    nonce: string | null
    auth_time: Date | null
  }>`
    with consumed as (
      update authorization_codes set consumed_at = now()
      where digest = ${input.digest}
        and consumed_at is null
        and expires_at > now()
        and application_id = ${input.applicationId}
        and redirect_uri = ${input.redirectUri}
        and case
          when code_challenge is null then ${input.verifier}::text is null
          when code_challenge_method = 'S256' then code_challenge = ${input.verifierS256}::text
          else code_challenge = ${input.verifier}::text
        end
      returning application_id, user_id, scopes, grant_id, nonce, auth_time
    ), access as (
      insert into access_tokens (digest, application_id, user_id, scopes, grant_id, expires_at)
      select ${input.accessDigest}, application_id, user_id, scopes, grant_id,
             now() + make_interval(secs => ${input.ttlSeconds})
      from consumed
      returning id, created_at, application_id, user_id, scopes, grant_id
    ), refresh as (
      insert into refresh_tokens (digest, application_id, user_id, access_token_id, scopes, grant_id)
      select ${input.refreshDigest}::bytea, application_id, user_id, id, scopes, grant_id
      from access where ${input.refreshDigest}::bytea is not null
      returning id
    )
    select a.created_at, a.scopes, a.user_id, c.nonce, c.auth_time from access a, consumed c`.execute(db)
  const row = result.rows[0]
  return row
    ? { createdAt: row.created_at, scopes: row.scopes, userId: row.user_id, nonce: row.nonce, authTime: row.auth_time }
    : undefined
}
