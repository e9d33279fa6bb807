import { type Insertable, type Kysely, sql } from 'kysely'
import type { ChangeTransaction } from '../changes/commit.ts'
import type { Application, ApplicationsTable, OAuthDB } from '../db/schema.ts'

type Db = Kysely<OAuthDB>

export async function insertApplication(db: Db, values: Insertable<ApplicationsTable>): Promise<Application> {
  return db.insertInto('applications').values(values).returningAll().executeTakeFirstOrThrow()
}

export async function findApplicationByUid(db: Db, uid: string): Promise<Application | undefined> {
  return db.selectFrom('applications').selectAll().where('uid', '=', uid).executeTakeFirst()
}

export async function findApplicationById(db: Db, id: number): Promise<Application | undefined> {
  return db.selectFrom('applications').selectAll().where('id', '=', id).executeTakeFirst()
}

/**
 * Applications that are clients. Resource servers (which only introspect) and trusted instance-wide
 * applications (the stack's own browser client, registered on every start) are not counted.
 */
/** Whether an instance-wide application (no owner) has this name, in any case. */
export async function instanceApplicationNamed(db: Db, name: string): Promise<boolean> {
  const row = await db
    .selectFrom('applications')
    .select('id')
    .where('owner_id', 'is', null)
    .where('registration_token_digest', 'is', null)
    .where(sql`lower(name)`, '=', name.trim().toLowerCase())
    .executeTakeFirst()
  return row !== undefined
}

export async function countApplications(db: Db): Promise<number> {
  const row = await db
    .selectFrom('applications')
    .where('resource_server', '=', false)
    .where((eb) => eb.or([eb('trusted', '=', false), eb('owner_id', 'is not', null)]))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Whose applications: a user's id, or null for the instance-wide ones (GitLab's admin area). */
type Owner = number | null

export async function listApplicationsOwnedBy(db: Db, ownerId: Owner): Promise<Application[]> {
  return (
    db
      .selectFrom('applications')
      .selectAll()
      .where('owner_id', ownerId === null ? 'is' : '=', ownerId)
      // the instance's own are those an administrator made, not those that registered themselves
      .$if(ownerId === null, (q) => q.where('registration_token_digest', 'is', null))
      .orderBy('id')
      .execute()
  )
}

export async function listAllApplications(db: Db): Promise<Array<Application & { owner: string | null }>> {
  return db
    .selectFrom('applications as a')
    .leftJoin('users as u', 'u.id', 'a.owner_id')
    .selectAll('a')
    .select('u.username as owner')
    .orderBy('a.id')
    .execute()
}

export interface ApplicationChanges {
  name: string
  redirect_uris: string[]
  scopes: string[]
  administrator_scopes: string[]
  confidential: boolean
  secret_digest: Buffer | null
  grant_types: string[]
}

/** Sets an application's grant list (an administrator's change); undefined when there is no such application. */
export async function setApplicationGrantTypes(
  db: ChangeTransaction,
  uid: string,
  grantTypes: string[],
): Promise<Application | undefined> {
  return db
    .updateTable('applications')
    .set({ grant_types: grantTypes, updated_at: sql<Date>`now()` })
    .where('uid', '=', uid)
    .returningAll()
    .executeTakeFirst()
}

/** Changes an application of `ownerId` (null: instance-wide); undefined when it is not theirs. */
export async function updateOwnedApplication(
  db: ChangeTransaction,
  id: number,
  ownerId: Owner,
  changes: Partial<ApplicationChanges>,
): Promise<Application | undefined> {
  return db
    .updateTable('applications')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('owner_id', ownerId === null ? 'is' : '=', ownerId)
    .returningAll()
    .executeTakeFirst()
}

export async function deleteOwnedApplication(db: ChangeTransaction, id: number, ownerId: Owner): Promise<boolean> {
  const row = await db
    .deleteFrom('applications')
    .where('id', '=', id)
    .where('owner_id', ownerId === null ? 'is' : '=', ownerId)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/**
 * Trusts (or stops trusting) an application. Only an instance-wide application can be trusted
 * (the database refuses anything else): 'owned' when the application belongs to a user.
 */
/** Whether the application's authorization requests must come pushed (RFC 9126 6: `request_uri` of /oauth/par only). */
export async function setApplicationRequiresPar(db: ChangeTransaction, id: number, required: boolean): Promise<void> {
  await db
    .updateTable('applications')
    .set({ require_pushed_authorization_requests: required, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .execute()
}

export async function setApplicationTrusted(
  db: ChangeTransaction,
  id: number,
  trusted: boolean,
): Promise<'changed' | 'owned' | 'unknown'> {
  const row = await db
    .updateTable('applications')
    .set({ trusted, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .$if(trusted, (q) => q.where('owner_id', 'is', null).where('registration_token_digest', 'is', null))
    .returning('id')
    .executeTakeFirst()
  if (row) return 'changed'
  return (await findApplicationById(db, id)) ? 'owned' : 'unknown'
}

/** Holds the application's row until the transaction ends: changes of one application run one at a time. */
export async function lockApplication(trx: ChangeTransaction, id: number): Promise<void> {
  await trx.selectFrom('applications').select('id').where('id', '=', id).forUpdate().execute()
}

/**
 * Registers a resource server under a client id of its choosing, or brings an existing one to
 * this secret and name: the same call on every start. No redirect URI, scope or grant: it only
 * introspects.
 */
export async function upsertResourceServer(
  db: ChangeTransaction,
  values: { uid: string; name: string; secretDigest: Buffer },
): Promise<Application> {
  return db
    .insertInto('applications')
    .values({
      uid: values.uid,
      name: values.name,
      secret_digest: values.secretDigest,
      redirect_uris: [],
      scopes: [],
      grant_types: [],
      confidential: true,
      resource_server: true,
    })
    .onConflict((oc) =>
      oc.column('uid').doUpdateSet({
        name: values.name,
        secret_digest: values.secretDigest,
        confidential: true,
        resource_server: true,
        updated_at: sql<Date>`now()`,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
}

/**
 * Registers a first-party browser application under a client id of its choosing, or brings an
 * existing one to these redirect URIs, scopes and name: the same call on every start. Public (PKCE,
 * no secret), instance-wide and trusted (no consent page), authorization code only.
 */
export async function upsertFirstPartyApplication(
  db: ChangeTransaction,
  values: { uid: string; name: string; redirectUris: string[]; scopes: string[]; grantTypes: string[] },
): Promise<Application> {
  const fields = {
    name: values.name,
    secret_digest: null,
    redirect_uris: values.redirectUris,
    scopes: values.scopes,
    grant_types: values.grantTypes,
    confidential: false,
    trusted: true,
    resource_server: false,
  }
  return db
    .insertInto('applications')
    .values({ uid: values.uid, ...fields })
    .onConflict((oc) => oc.column('uid').doUpdateSet({ ...fields, owner_id: null, updated_at: sql<Date>`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow()
}
