import { type Kysely, sql } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'

type Db = Kysely<OAuthDB>

export interface SessionRow {
  id_digest: Buffer
  user_id: number | null
  pending_user_id: number | null
  authenticated_at: Date | null
  expires_at: Date
}

export async function findLiveSession(db: Db, idDigest: Buffer): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .select(['id_digest', 'user_id', 'pending_user_id', 'authenticated_at', 'expires_at'])
    .where('id_digest', '=', idDigest)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst()
}

export async function deleteSession(db: Db, idDigest: Buffer): Promise<void> {
  await db.deleteFrom('sessions').where('id_digest', '=', idDigest).execute()
}

export async function deleteExpiredSessions(db: Db): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', sql<Date>`now()`).execute()
}
