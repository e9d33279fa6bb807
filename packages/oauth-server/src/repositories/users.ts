import { type Kysely, sql } from 'kysely'
import type { ChangeTransaction } from '../changes/commit.ts'
import type { NewUser, OAuthDB, User } from '../db/schema.ts'

/** Reads and bookkeeping writes (sign-in times, TOTP steps) take any handle; changes take a ChangeTransaction. */
type Db = Kysely<OAuthDB>

export async function insertUser(db: Db, user: NewUser): Promise<User> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow()
}

export async function findUserByUsername(db: Db, username: string): Promise<User | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(username)`, '=', username.toLowerCase())
    .executeTakeFirst()
}

export async function findUserById(db: Db, id: number): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Shifts current_sign_in_at to last_sign_in_at, as GitLab reports both. */
export async function recordSignIn(db: Db, id: number): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({
      last_sign_in_at: eb.fn.coalesce('current_sign_in_at', sql<Date>`now()`),
      current_sign_in_at: sql<Date>`now()`,
      last_activity_on: sql<string>`current_date`,
    }))
    .where('id', '=', id)
    .execute()
}

/** Records the TOTP step just used; false when that step (or a later one) was already used. */
export async function claimOtpStep(db: Db, id: number, step: number): Promise<boolean> {
  const row = await db
    .updateTable('users')
    .set({ otp_last_step: step })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('otp_last_step', 'is', null), eb('otp_last_step', '<', step)]))
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

export interface ProfileChanges {
  name?: string
  bio?: string
  location?: string
  public_email?: string
  website_url?: string
  organization?: string
  job_title?: string
}

export async function updateProfile(
  trx: ChangeTransaction,
  id: number,
  changes: ProfileChanges,
): Promise<User | undefined> {
  if (Object.keys(changes).length === 0) return findUserById(trx, id)
  return trx.updateTable('users').set(changes).where('id', '=', id).returningAll().executeTakeFirst()
}

/** Sign-in accepts the username or the email address. */
export async function findUserByLogin(db: Db, login: string): Promise<User | undefined> {
  const value = login.toLowerCase()
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb(sql<string>`lower(username)`, '=', value), eb(sql<string>`lower(email)`, '=', value)]))
    .orderBy('id')
    .executeTakeFirst()
}

export async function findUserByEmail(db: Db, email: string): Promise<User | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst()
}

export async function listUsers(db: Db): Promise<User[]> {
  return db.selectFrom('users').selectAll().orderBy('id').execute()
}

/** Locks or unlocks an account; locking also ends its browser sessions. */
export async function setUserLocked(trx: ChangeTransaction, id: number, locked: boolean): Promise<boolean> {
  const row = await trx.updateTable('users').set({ locked }).where('id', '=', id).returning('id').executeTakeFirst()
  if (row && locked) await trx.deleteFrom('sessions').where('user_id', '=', id).execute()
  return row !== undefined
}

export async function setPendingOtpSecret(db: Db, id: number, sealed: string | null): Promise<void> {
  await db.updateTable('users').set({ otp_pending_secret: sealed }).where('id', '=', id).execute()
}

/** Turns the confirmed seed on (the confirming step counts as used) and stores the recovery code digests. */
export async function enableTwoFactor(
  trx: ChangeTransaction,
  id: number,
  sealed: string,
  step: number,
  recoveryDigests: Buffer[],
): Promise<void> {
  await trx
    .updateTable('users')
    .set({ otp_secret: sealed, otp_last_step: step, otp_pending_secret: null })
    .where('id', '=', id)
    .execute()
  await trx.deleteFrom('recovery_codes').where('user_id', '=', id).execute()
  await trx
    .insertInto('recovery_codes')
    .values(recoveryDigests.map((digest) => ({ user_id: id, digest })))
    .execute()
}

export async function disableTwoFactor(trx: ChangeTransaction, id: number): Promise<void> {
  await trx
    .updateTable('users')
    .set({ otp_secret: null, otp_last_step: null, otp_pending_secret: null })
    .where('id', '=', id)
    .execute()
  await trx.deleteFrom('recovery_codes').where('user_id', '=', id).execute()
}

/**
 * A page of users, by id, with the count of all that match: `username` exactly (case-insensitive,
 * as GitLab's UsersFinder), `search` within username, name or email.
 */
export async function findUsers(
  db: Db,
  filter: { username?: string | undefined; search?: string | undefined },
  page: { limit: number; offset: number },
): Promise<{ users: User[]; total: number }> {
  let query = db.selectFrom('users')
  if (filter.username !== undefined) {
    query = query.where(sql<string>`lower(username)`, '=', filter.username.toLowerCase())
  }
  if (filter.search !== undefined && filter.search !== '') {
    const pattern = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    query = query.where((eb) =>
      eb.or([eb('username', 'ilike', pattern), eb('name', 'ilike', pattern), eb('email', 'ilike', pattern)]),
    )
  }
  const [users, count] = await Promise.all([
    query.selectAll().orderBy('id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { users, total: Number(count.n) }
}
