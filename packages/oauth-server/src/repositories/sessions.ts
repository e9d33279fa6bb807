import { type Kysely, sql, type Transaction } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'

type Db = Kysely<OAuthDB> | Transaction<OAuthDB>

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

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(row).execute()
}

/** Keeps a sealed one-time message on the session for its next page. */
export async function setSessionFlash(db: Db, idDigest: Buffer, sealed: string): Promise<void> {
  await db.updateTable('sessions').set({ flash_sealed: sealed }).where('id_digest', '=', idDigest).execute()
}

/** Reads and clears the one-time message in one statement: it is shown once, even to two tabs. */
export async function takeSessionFlash(db: Db, idDigest: Buffer): Promise<string | undefined> {
  const row = await db
    .with('old', (q) =>
      q.selectFrom('sessions').select(['id_digest', 'flash_sealed']).where('id_digest', '=', idDigest),
    )
    .updateTable('sessions')
    .from('old')
    .set({ flash_sealed: null })
    .whereRef('sessions.id_digest', '=', 'old.id_digest')
    .where('old.flash_sealed', 'is not', null)
    .returning('old.flash_sealed as sealed')
    .executeTakeFirst()
  return row?.sealed ?? undefined
}
