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

/**
 * Marks a code used, atomically: of two concurrent redemptions only one gets `true`; the
 * other waits on the row lock and then finds it consumed.
 */
export async function consumeAuthorizationCode(db: Db, id: number): Promise<boolean> {
  const row = await db
    .updateTable('authorization_codes')
    .set({ consumed_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}
