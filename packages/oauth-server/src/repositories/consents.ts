import { type Kysely, sql } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'

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
