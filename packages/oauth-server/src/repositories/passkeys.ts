import { type Selectable, sql } from 'kysely'
import type { PasskeysTable } from '../db/schema.ts'
import type { Db } from './tokens.ts'

export type Passkey = Selectable<PasskeysTable>

export async function insertPasskey(
  db: Db,
  passkey: {
    userId: number
    credentialId: string
    publicKey: Buffer
    signCount: number
    transports: string[]
    name: string
  },
): Promise<void> {
  await db
    .insertInto('passkeys')
    .values({
      user_id: passkey.userId,
      credential_id: passkey.credentialId,
      public_key: passkey.publicKey,
      sign_count: passkey.signCount,
      transports: passkey.transports,
      name: passkey.name,
    })
    .execute()
}

export async function listPasskeys(db: Db, userId: number): Promise<Passkey[]> {
  return db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('id').execute()
}

export async function findPasskey(db: Db, credentialId: string): Promise<Passkey | undefined> {
  return db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst()
}

/**
 * Records a use: the authenticator's new signature counter, only if it went forward (or both are
 * zero, as authenticators that keep no counter send), in one statement; false for a counter gone
 * back, the sign of a cloned authenticator (WebAuthn 6.1.1).
 */
export async function recordPasskeyUse(db: Db, id: number, counter: number): Promise<boolean> {
  const row = await db
    .updateTable('passkeys')
    .set({ sign_count: counter, last_used_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([eb('sign_count', '<', counter), eb.and([eb('sign_count', '=', 0), eb(sql.lit(counter), '=', 0)])]),
    )
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

export async function deletePasskey(db: Db, id: number, userId: number): Promise<Passkey | undefined> {
  return db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst()
}

/** With two-factor authentication off, no second factor is left. */
export async function deleteUserPasskeys(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('passkeys').where('user_id', '=', userId).execute()
}

/** Keeps the challenge of a ceremony on the session. */
export async function setSessionChallenge(db: Db, idDigest: Buffer, challenge: string): Promise<void> {
  await db.updateTable('sessions').set({ webauthn_challenge: challenge }).where('id_digest', '=', idDigest).execute()
}

/** Reads and clears the session's challenge in one statement: a ceremony is answered once. */
export async function takeSessionChallenge(db: Db, idDigest: Buffer): Promise<string | undefined> {
  const row = await db
    .with('old', (q) =>
      q.selectFrom('sessions').select(['id_digest', 'webauthn_challenge']).where('id_digest', '=', idDigest),
    )
    .updateTable('sessions')
    .from('old')
    .set({ webauthn_challenge: null })
    .whereRef('sessions.id_digest', '=', 'old.id_digest')
    .where('old.webauthn_challenge', 'is not', null)
    .returning('old.webauthn_challenge as challenge')
    .executeTakeFirst()
  return row?.challenge ?? undefined
}
