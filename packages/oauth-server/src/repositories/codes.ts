import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'
import { insertTokenRows, insertTokens, type NewTokens } from './tokens.ts'

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
  /** RFC 9449 10: the DPoP key the code may be redeemed with */
  dpopJkt?: string | null
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
      dpop_jkt: code.dpopJkt ?? null,
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
  /** the key of the DPoP proof sent with the attempt */
  dpopJkt: string | null
}

/**
 * What binds a code to its authorization request (RFC 6749 4.1.3, RFC 7636 4.6, RFC 9700
 * 4.8.2), each rule once, as SQL over the code's row: the redemption matches only a code for
 * which all hold, and `checkAuthorizationCode` reports each one, so the explanation of a refusal
 * can never disagree with the refusal.
 */
function bindingRules(attempt: { [K in keyof CodeAttempt]: CodeAttempt[K] | RawBuilder<CodeAttempt[K]> }) {
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
    /** a code requested for a DPoP key is redeemed with a proof of that key (RFC 9449 10) */
    dpop_key: sql<boolean>`(dpop_jkt is null or dpop_jkt = ${attempt.dpopJkt}::text)`,
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

/** What the update that consumes a code returns of it (with the created tokens' instant, `redeemedOf`). */
interface ConsumedCode {
  application_id: number
  user_id: number
  scopes: string[]
  nonce: string | null
  auth_time: Date | null
}

const redeemedOf = (row: ConsumedCode & { created_at: Date }): RedeemedCode => ({
  createdAt: row.created_at,
  scopes: row.scopes,
  userId: row.user_id,
  nonce: row.nonce,
  authTime: row.auth_time,
})

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
  const consumed = sql<ConsumedCode>`
    update authorization_codes set consumed_at = now()
    where digest = ${attempt.digest} and ${sql.join(Object.values(bindingRules(attempt)), sql` and `)}
    returning application_id, user_id, scopes, grant_id, nonce, auth_time`
  const row = await insertTokens(db, consumed, tokens)
  return row ? redeemedOf(row) : undefined
}

/**
 * Redeems several codes in one statement (one round trip, one commit): each attempt is checked
 * by the same binding rules, over its row of the batch, and issued its own tokens. A code named
 * twice is consumed once (PostgreSQL updates a row once per statement); the other attempt finds
 * nothing, as the loser of a concurrent redemption does. Undefined for each attempt that did not
 * redeem (the caller then asks `checkAuthorizationCode` why).
 */
export async function redeemAuthorizationCodes(
  db: Db,
  redemptions: ReadonlyArray<{ attempt: CodeAttempt; tokens: NewTokens }>,
): Promise<Array<RedeemedCode | undefined>> {
  const column = <T>(name: string) => sql<T>`${sql.ref(`a.${name}`)}`
  const list = <T>(pick: (r: { attempt: CodeAttempt; tokens: NewTokens }) => T) => redemptions.map(pick)
  const rules = bindingRules({
    digest: column('a_digest'),
    applicationId: column('a_application_id'),
    redirectUri: column('a_redirect_uri'),
    verifier: column('a_verifier'),
    verifierS256: column('a_verifier_s256'),
    dpopJkt: column('a_dpop_jkt'),
  })
  const consumed = sql<
    ConsumedCode & { n: number; access_digest: Buffer; refresh_digest: Buffer | null; access_jkt: string | null }
  >`
    update authorization_codes set consumed_at = now()
    from unnest(${list((r) => r.attempt.digest)}::bytea[], ${list((r) => r.attempt.applicationId)}::int8[],
      ${list((r) => r.attempt.redirectUri)}::text[], ${list((r) => r.attempt.verifier)}::text[],
      ${list((r) => r.attempt.verifierS256)}::text[], ${list((r) => r.tokens.accessDigest)}::bytea[],
      ${list((r) => r.tokens.refreshDigest)}::bytea[], ${list((r) => r.attempt.dpopJkt)}::text[],
      ${list((r) => r.tokens.accessJkt)}::text[], ${list((r) => r.tokens.refreshJkt)}::text[]) with ordinality
      as a(a_digest, a_application_id, a_redirect_uri, a_verifier, a_verifier_s256, a_access, a_refresh, a_dpop_jkt,
        a_access_jkt, a_refresh_jkt, n)
    where digest = a.a_digest and ${sql.join(Object.values(rules), sql` and `)}
    returning a.n::int as n, a.a_access as access_digest, a.a_refresh as refresh_digest,
      a.a_access_jkt as access_jkt, a.a_refresh_jkt as refresh_jkt, application_id, user_id, scopes, grant_id, nonce, auth_time`
  const rows = await insertTokenRows(db, consumed, {
    accessDigest: sql<Buffer>`access_digest`,
    refreshDigest: sql<Buffer | null>`refresh_digest`,
    accessJkt: sql<string | null>`access_jkt`,
    refreshJkt: sql<string | null>`refresh_jkt`,
    ttlSeconds: redemptions[0]?.tokens.ttlSeconds ?? 0,
  })
  const redeemed: Array<RedeemedCode | undefined> = redemptions.map(() => undefined)
  for (const row of rows) redeemed[row.n - 1] = redeemedOf(row)
  return redeemed
}
