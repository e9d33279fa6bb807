import { type Kysely, sql, type Transaction } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'
import { insertTokens, type NewTokens } from './tokens.ts'

type Db = Kysely<OAuthDB> | Transaction<OAuthDB>

export interface NewDeviceGrant {
  deviceCodeDigest: Buffer
  userCodeDigest: Buffer
  applicationId: number
  scopes: string[]
  ttlSeconds: number
  interval: number
}

/** False when the user code's digest is taken already (a live grant holds it): draw another code. */
export async function insertDeviceGrant(db: Db, grant: NewDeviceGrant): Promise<boolean> {
  const row = await db
    .insertInto('device_grants')
    .values({
      device_code_digest: grant.deviceCodeDigest,
      user_code_digest: grant.userCodeDigest,
      application_id: grant.applicationId,
      scopes: grant.scopes,
      poll_interval: grant.interval,
      expires_at: sql<Date>`now() + make_interval(secs => ${grant.ttlSeconds})`,
    })
    .onConflict((oc) => oc.column('user_code_digest').doNothing())
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/** Grants past their lifetime are of no use; their user codes become free again. */
export async function deleteExpiredDeviceGrants(db: Db): Promise<void> {
  await db.deleteFrom('device_grants').where('expires_at', '<', sql<Date>`now() - interval '1 day'`).execute()
}

/** A grant still waiting for a person's decision, by its user code, with the application asking. */
export async function findUndecidedDeviceGrant(db: Db, userCodeDigest: Buffer) {
  return db
    .selectFrom('device_grants as d')
    .innerJoin('applications as a', 'a.id', 'd.application_id')
    .leftJoin('users as owner', 'owner.id', 'a.owner_id')
    .select([
      'd.id',
      'd.scopes',
      'd.application_id as applicationId',
      'a.name as applicationName',
      // who registered it (null: the instance's own), for the person deciding
      'owner.username as applicationOwner',
      sql<boolean>`a.registration_token_digest is not null`.as('applicationRegisteredItself'),
    ])
    .where('d.user_code_digest', '=', userCodeDigest)
    .where('d.decision', 'is', null)
    .where('d.expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst()
}

/** Records a person's decision once; false when the grant was decided, expired or unknown. */
export async function decideDeviceGrant(
  db: Db,
  userCodeDigest: Buffer,
  userId: number,
  decision: 'approved' | 'denied',
): Promise<boolean> {
  const result = await db
    .updateTable('device_grants')
    .set({ user_id: userId, decision })
    .where('user_code_digest', '=', userCodeDigest)
    .where('decision', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** What a poll finds, after recording it (the row is locked for the rest of the transaction). */
export type PollState =
  | { state: 'unknown' }
  | { state: 'consumed' }
  | { state: 'expired' }
  | { state: 'too_fast'; interval: number }
  | { state: 'pending' }
  | { state: 'denied' }
  | { state: 'approved' }

/**
 * A client's poll (RFC 8628 3.4-3.5), inside the caller's transaction: finds the grant of this
 * client by its device code, and, unless it is over, records the poll; a poll before the interval
 * passed raises the interval by 5 seconds for this and every later one.
 */
export async function recordPoll(
  trx: Transaction<OAuthDB>,
  deviceCodeDigest: Buffer,
  applicationId: number,
): Promise<PollState> {
  const row = await sql<{
    id: number
    consumed: boolean
    expired: boolean
    too_fast: boolean
    poll_interval: number
    decision: 'approved' | 'denied' | null
  }>`
    select id, consumed_at is not null as consumed, expires_at <= now() as expired, poll_interval, decision,
      coalesce(last_polled_at > now() - make_interval(secs => poll_interval), false) as too_fast
    from device_grants where device_code_digest = ${deviceCodeDigest} and application_id = ${applicationId}
    for update`
    .execute(trx)
    .then((r) => r.rows[0])
  if (!row) return { state: 'unknown' }
  if (row.consumed) return { state: 'consumed' }
  if (row.expired) return { state: 'expired' }
  const interval = row.too_fast ? row.poll_interval + 5 : row.poll_interval
  await trx
    .updateTable('device_grants')
    .set({ last_polled_at: sql<Date>`now()`, poll_interval: interval })
    .where('id', '=', row.id)
    .execute()
  if (row.too_fast) return { state: 'too_fast', interval }
  if (row.decision === null) return { state: 'pending' }
  return { state: row.decision }
}

/** Redeems an approved grant for tokens in one statement: consumed once, tokens for its person. */
export async function redeemDeviceGrant(trx: Transaction<OAuthDB>, deviceCodeDigest: Buffer, tokens: NewTokens) {
  const consumed = sql<{ application_id: number; user_id: number; scopes: string[]; grant_id: string }>`
    update device_grants set consumed_at = now()
    where device_code_digest = ${deviceCodeDigest} and decision = 'approved' and consumed_at is null
    returning application_id, user_id, scopes, gen_random_uuid() as grant_id`
  return insertTokens(trx, consumed, tokens)
}
