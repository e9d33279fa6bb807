import { type Kysely, sql } from 'kysely'
import type { NewUser, OAuthDB, User } from '../db/schema.ts'

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

export async function updateProfile(db: Db, id: number, changes: ProfileChanges): Promise<User | undefined> {
  if (Object.keys(changes).length === 0) return findUserById(db, id)
  return db.updateTable('users').set(changes).where('id', '=', id).returningAll().executeTakeFirst()
}
