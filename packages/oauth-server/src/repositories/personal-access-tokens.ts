import { type Kysely, sql } from 'kysely'
import type { OAuthDB, PersonalAccessToken } from '../db/schema.ts'

type Db = Kysely<OAuthDB>

export async function insertPersonalAccessToken(
  db: Db,
  values: { digest: Buffer; userId: number; name: string; scopes: string[]; expiresAt: string | null },
): Promise<PersonalAccessToken> {
  return db
    .insertInto('personal_access_tokens')
    .values({
      digest: values.digest,
      user_id: values.userId,
      name: values.name,
      scopes: values.scopes,
      expires_at: values.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** A token expires at the start of its expiry day (by the database clock). */
const EXPIRED = sql<boolean>`coalesce(expires_at <= current_date, false)`.as('expired')

export type PersonalAccessTokenRow = PersonalAccessToken & { expired: boolean }

export async function findPersonalAccessToken(db: Db, digest: Buffer): Promise<PersonalAccessTokenRow | undefined> {
  return db
    .selectFrom('personal_access_tokens')
    .selectAll()
    .select(EXPIRED)
    .where('digest', '=', digest)
    .executeTakeFirst()
}

/** A user's tokens, oldest first (or newest first). */
export async function listPersonalAccessTokens(
  db: Db,
  userId: number,
  order: 'asc' | 'desc' = 'asc',
): Promise<PersonalAccessTokenRow[]> {
  return db
    .selectFrom('personal_access_tokens')
    .selectAll()
    .select(EXPIRED)
    .where('user_id', '=', userId)
    .orderBy('id', order)
    .execute()
}

/** Last use, at most once a minute per token so reads do not turn into a write each. */
export async function touchPersonalAccessToken(db: Db, id: number): Promise<void> {
  await db
    .updateTable('personal_access_tokens')
    .set({ last_used_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]),
    )
    .execute()
}

export async function revokePersonalAccessToken(db: Db, id: number, userId: number): Promise<boolean> {
  const row = await db
    .updateTable('personal_access_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}
