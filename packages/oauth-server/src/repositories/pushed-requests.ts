import { sql } from 'kysely'
import type { Db } from './tokens.ts'

/** What a request_uri stands for. */
export interface PushedRequest {
  id: number
  application_id: number
  parameters: Record<string, string>
  dpop_jkt: string | null
}

export async function insertPushedRequest(
  db: Db,
  request: {
    digest: Buffer
    applicationId: number
    parameters: Record<string, string>
    dpopJkt: string | null
    ttlSeconds: number
  },
): Promise<void> {
  await db
    .insertInto('pushed_authorization_requests')
    .values({
      digest: request.digest,
      application_id: request.applicationId,
      parameters: JSON.stringify(request.parameters),
      dpop_jkt: request.dpopJkt,
      expires_at: sql<Date>`now() + make_interval(secs => ${request.ttlSeconds})`,
    })
    .execute()
}

/**
 * Opens a request_uri at the authorization endpoint, in one statement: a live, unused one only;
 * the first opening gives it `openSeconds` more, for the person to sign in and decide.
 */
export async function openPushedRequest(
  db: Db,
  digest: Buffer,
  applicationId: number,
  openSeconds: number,
): Promise<PushedRequest | undefined> {
  return db
    .updateTable('pushed_authorization_requests')
    .set({
      opened_at: sql<Date>`coalesce(opened_at, now())`,
      expires_at: sql<Date>`case when opened_at is null then now() + make_interval(secs => ${openSeconds}) else expires_at end`,
    })
    .where('digest', '=', digest)
    .where('application_id', '=', applicationId)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(['id', 'application_id', 'parameters', 'dpop_jkt'])
    .executeTakeFirst()
}

/** Uses a request_uri up (the person decided); false when it was used already or expired. */
export async function consumePushedRequest(db: Db, id: number): Promise<boolean> {
  const row = await db
    .updateTable('pushed_authorization_requests')
    .set({ consumed_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

export async function deleteExpiredPushedRequests(db: Db): Promise<void> {
  await db.deleteFrom('pushed_authorization_requests').where('expires_at', '<', sql<Date>`now()`).execute()
}
