import { type Kysely, sql, type Transaction } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'
import { insertTokens, type NewTokens } from './tokens.ts'

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

/** Codes past their lifetime are of no use, consumed or not (replay detection ends with them). */
export async function deleteExpiredAuthorizationCodes(db: Db): Promise<void> {
  await db.deleteFrom('authorization_codes').where('expires_at', '<', sql<Date>`now() - interval '1 day'`).execute()
}

/** A client's attempt to redeem a code at the token endpoint. */
export interface CodeAttempt {
  digest: Buffer
  applicationId: number
  redirectUri: string
  /** the verifier as sent, and its S256 transform */
  verifier: string | null
  verifierS256: string | null
}

/**
 * What binds a code to its authorization request (RFC 6749 4.1.3, RFC 7636 4.6, RFC 9700
 * 4.8.2), each rule once, as SQL over the code's row: the redemption matches only a code for
 * which all hold, and `checkAuthorizationCode` reports each one, so the explanation of a refusal
 * can never disagree with the refusal.
 */
function bindingRules(attempt: CodeAttempt) {
  const { verifier, verifierS256 } = attempt
  return {
    unused: sql<boolean>`consumed_at is null`,
    live: sql<boolean>`expires_at > now()`,
    client: sql<boolean>`application_id = ${attempt.applicationId}`,
    redirect_uri: sql<boolean>`redirect_uri = ${attempt.redirectUri}`,
    /** a code requested with a challenge needs a verifier */
    verifier_sent: sql<boolean>`(code_challenge is null or ${verifier}::text is not null)`,
    /** ...that matches it (RFC 7636 4.6) */
    verifier_matches: sql<boolean>`(code_challenge is null or ${verifier}::text is null or case
      when code_challenge_method = 'S256' then code_challenge = ${verifierS256}::text
      else code_challenge = ${verifier}::text end)`,
    /** downgrade defence: no verifier for a code requested without a challenge */
    challenge_made: sql<boolean>`(code_challenge is not null or ${verifier}::text is null)`,
  }
}

export type CodeRule = keyof ReturnType<typeof bindingRules>

/** The code with this digest (consumed or not) and whether each binding rule holds for this attempt. */
export async function checkAuthorizationCode(
  db: Db,
  attempt: CodeAttempt,
): Promise<{ grantId: string; rules: Record<CodeRule, boolean> } | undefined> {
  const rules = Object.entries(bindingRules(attempt)).map(
    ([name, rule]) => sql`coalesce(${rule}, false) as ${sql.ref(name)}`,
  )
  const result = await sql<Record<CodeRule, boolean> & { grant_id: string }>`
    select grant_id, ${sql.join(rules)} from authorization_codes where digest = ${attempt.digest}`.execute(db)
  const row = result.rows[0]
  if (!row) return undefined
  const { grant_id, ...checks } = row
  return { grantId: grant_id, rules: checks }
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
 * unexpired code every binding rule holds for, takes its row lock and issues the tokens. Of two
 * concurrent redemptions only one finds the code unused. Undefined when nothing matched (the
 * caller then asks `checkAuthorizationCode` why).
 */
export async function redeemAuthorizationCode(
  db: Db,
  attempt: CodeAttempt,
  tokens: NewTokens,
): Promise<RedeemedCode | undefined> {
  const consumed = sql<{
    application_id: number
    user_id: number
    scopes: string[]
    nonce: string | null
    auth_time: Date | null
  }>`
    update authorization_codes set consumed_at = now()
    where digest = ${attempt.digest} and ${sql.join(Object.values(bindingRules(attempt)), sql` and `)}
    returning application_id, user_id, scopes, grant_id, nonce, auth_time`
  const row = await insertTokens(db, consumed, tokens)
  return row
    ? { createdAt: row.created_at, scopes: row.scopes, userId: row.user_id, nonce: row.nonce, authTime: row.auth_time }
    : undefined
}
