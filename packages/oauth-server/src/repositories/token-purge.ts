import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'

/** Rows one statement deletes at most: short statements, short row locks. */
export const PURGE_BATCH = 1000

export interface Purged {
  access_token: number
  refresh_token: number
  personal_access_token: number
}

/**
 * One batch of access tokens that ended (expired or revoked) before `cutoff`, with their refresh
 * tokens, unless one of those is still usable or ended after `cutoff`: a refresh token outlives
 * its access token (no expiry), and a rotated one is kept for the retention so that its reuse is
 * still recognised and revokes its family. `skip locked`: rows another instance is purging, or a
 * refresh holds, are left for the next batch, and nothing waits.
 */
async function purgeAccessBatch(db: Kysely<OAuthDB>, cutoff: RawBuilder<Date>, limit: number) {
  const result = await sql<{ access: string; refresh: string }>`
    with doomed as (
      select t.id from access_tokens t
      where (t.expires_at < ${cutoff} or t.revoked_at < ${cutoff})
        and not exists (
          select 1 from refresh_tokens r
          where r.access_token_id = t.id
            and (coalesce(r.revoked_at, r.rotated_at) is null or coalesce(r.revoked_at, r.rotated_at) >= ${cutoff})
        )
      limit ${limit}
      for update of t skip locked
    ),
    refresh as (delete from refresh_tokens where access_token_id in (select id from doomed) returning 1),
    access as (delete from access_tokens where id in (select id from doomed) returning 1)
    select (select count(*) from access) as access, (select count(*) from refresh) as refresh`.execute(db)
  const row = result.rows[0]
  return { access: Number(row?.access ?? 0), refresh: Number(row?.refresh ?? 0) }
}

/** One batch of personal access tokens revoked, or past their expiry date, before `cutoff`. */
async function purgePersonalBatch(db: Kysely<OAuthDB>, cutoff: RawBuilder<Date>, limit: number): Promise<number> {
  const result = await sql`
    delete from personal_access_tokens where id in (
      select id from personal_access_tokens
      where revoked_at < ${cutoff} or expires_at < (${cutoff})::date
      limit ${limit}
      for update skip locked
    )`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}

/**
 * Deletes the tokens that ended more than `retentionDays` ago, batch after batch until a batch
 * comes back short: each batch its own statement, so no lock is held across the purge and a
 * sign-in, a refresh or another instance's purge never waits on it for long.
 */
export async function purgeEndedTokens(
  db: Kysely<OAuthDB>,
  retentionDays: number,
  batch = PURGE_BATCH,
): Promise<Purged> {
  // the database's clock, as every expiry is judged
  const cutoff = sql<Date>`now() - make_interval(days => ${retentionDays})`
  const purged: Purged = { access_token: 0, refresh_token: 0, personal_access_token: 0 }
  for (;;) {
    const { access, refresh } = await purgeAccessBatch(db, cutoff, batch)
    purged.access_token += access
    purged.refresh_token += refresh
    if (access < batch) break
  }
  for (;;) {
    const deleted = await purgePersonalBatch(db, cutoff, batch)
    purged.personal_access_token += deleted
    if (deleted < batch) break
  }
  return purged
}
