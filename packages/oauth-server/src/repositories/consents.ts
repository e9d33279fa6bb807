import { type Kysely, sql } from 'kysely'
import type { ChangeTransaction } from '../changes/commit.ts'
import type { OAuthDB } from '../db/schema.ts'
import { revokeTokensWhere } from './tokens.ts'

type Db = Kysely<OAuthDB>

export async function findConsentScopes(db: Db, userId: number, applicationId: number): Promise<string[]> {
  const row = await db
    .selectFrom('consents')
    .select('scopes')
    .where('user_id', '=', userId)
    .where('application_id', '=', applicationId)
    .executeTakeFirst()
  return row?.scopes ?? []
}

/** Adds scopes to what the user approved for the application. */
export async function recordConsent(db: Db, userId: number, applicationId: number, scopes: string[]): Promise<void> {
  await db
    .insertInto('consents')
    .values({ user_id: userId, application_id: applicationId, scopes })
    .onConflict((oc) =>
      oc.columns(['user_id', 'application_id']).doUpdateSet({
        scopes: sql<string[]>`array(select distinct unnest(consents.scopes || excluded.scopes) order by 1)`,
        updated_at: sql<Date>`now()`,
      }),
    )
    .execute()
}

export interface AuthorizedApplication {
  application_id: number
  name: string
  uid: string
  scopes: string[]
  created_at: Date
  updated_at: Date
}

export async function listConsents(db: Db, userId: number): Promise<AuthorizedApplication[]> {
  return db
    .selectFrom('consents as c')
    .innerJoin('applications as a', 'a.id', 'c.application_id')
    .select(['c.application_id', 'a.name', 'a.uid', 'c.scopes', 'c.created_at', 'c.updated_at'])
    .where('c.user_id', '=', userId)
    .orderBy('a.name')
    .execute()
}

/** Serialises a user's consent changes (approve, revoke) so neither outlives the other. */
export async function lockUserConsents(trx: Db, userId: number): Promise<void> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute()
}

/**
 * Withdraws what the user approved for an application: the consent, every code and approved
 * device grant not yet redeemed, and every access and refresh token of that application for that user. Run it in
 * the change's transaction: codes go before tokens, so a redemption in flight (which holds its code's
 * row) finishes first and its tokens are then revoked too.
 */
export async function revokeAuthorization(
  trx: ChangeTransaction,
  userId: number,
  applicationId: number,
): Promise<void> {
  await lockUserConsents(trx, userId)
  await trx.deleteFrom('consents').where('user_id', '=', userId).where('application_id', '=', applicationId).execute()
  await trx
    .updateTable('authorization_codes')
    .set({ consumed_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('application_id', '=', applicationId)
    .where('consumed_at', 'is', null)
    .execute()
  await trx
    .updateTable('device_grants')
    .set({ consumed_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('application_id', '=', applicationId)
    .where('consumed_at', 'is', null)
    .execute()
  await revokeTokensWhere(trx, { user_id: userId, application_id: applicationId })
}
