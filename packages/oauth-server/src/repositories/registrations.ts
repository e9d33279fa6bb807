import { sql } from 'kysely'
import type { ChangeTransaction } from '../changes/commit.ts'
import type { Application } from '../db/schema.ts'
import { ADMINISTRATOR_SCOPES } from '../domain/scopes.ts'
import type { Db } from './tokens.ts'

/** A new initial access token (RFC 7591 3) of an administrator's. */
export async function insertInitialAccessToken(
  db: Db,
  token: { digest: Buffer; name: string; uses: number; expiresAt: Date },
): Promise<{ id: number; expires_at: Date }> {
  return db
    .insertInto('initial_access_tokens')
    .values({ digest: token.digest, name: token.name, uses_left: token.uses, expires_at: token.expiresAt })
    .returning(['id', 'expires_at'])
    .executeTakeFirstOrThrow()
}

/**
 * Spends one use of an initial access token, in one statement (of two registrations racing for
 * its last use, one gets it); false when it is unknown, expired or used up.
 */
export async function spendInitialAccessToken(db: Db, digest: Buffer): Promise<boolean> {
  const row = await db
    .updateTable('initial_access_tokens')
    .set({ uses_left: sql<number>`uses_left - 1` })
    .where('digest', '=', digest)
    .where('uses_left', '>', 0)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/** The client a registration access token belongs to (RFC 7592 2), by both its id and the token. */
export async function findRegisteredClient(db: Db, uid: string, tokenDigest: Buffer): Promise<Application | undefined> {
  return db
    .selectFrom('applications')
    .selectAll()
    .where('uid', '=', uid)
    .where('registration_token_digest', '=', tokenDigest)
    .executeTakeFirst()
}

/** RFC 7592 2.2: the client's metadata replaced (its id, secret and registration token stay). */
export async function updateRegisteredClient(
  db: ChangeTransaction,
  id: number,
  values: { name: string; redirectUris: string[]; scopes: string[]; grantTypes: string[] },
): Promise<Application> {
  return db
    .updateTable('applications')
    .set({
      name: values.name,
      redirect_uris: values.redirectUris,
      scopes: values.scopes,
      // a client an administrator's initial access token made may hold what it was allowed; an open one asks for none
      administrator_scopes: values.scopes.filter((s) => (ADMINISTRATOR_SCOPES as readonly string[]).includes(s)),
      grant_types: values.grantTypes,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}
