import { type Kysely, sql } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'

type Db = Kysely<OAuthDB>

export interface SessionRow {
  id_digest: Buffer
  user_id: number | null
  pending_user_id: number | null
  expires_at: Date
}

export async function insertSession(db: Db, idDigest: Buffer, ttlSeconds: number): Promise<SessionRow> {
  return db
    .insertInto('sessions')
    .values({ id_digest: idDigest, expires_at: new Date(Date.now() + ttlSeconds * 1000) })
    .returning(['id_digest', 'user_id', 'pending_user_id', 'expires_at'])
    .executeTakeFirstOrThrow()
}

export async function findLiveSession(db: Db, idDigest: Buffer): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .select(['id_digest', 'user_id', 'pending_user_id', 'expires_at'])
    .where('id_digest', '=', idDigest)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst()
}

export async function setSessionPending(db: Db, idDigest: Buffer, userId: number): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ pending_user_id: userId, user_id: null })
    .where('id_digest', '=', idDigest)
    .execute()
}

export async function deleteSession(db: Db, idDigest: Buffer): Promise<void> {
  await db.deleteFrom('sessions').where('id_digest', '=', idDigest).execute()
}

export async function deleteExpiredSessions(db: Db): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', sql<Date>`now()`).execute()
}
