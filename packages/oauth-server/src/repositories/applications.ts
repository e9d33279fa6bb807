import type { Insertable, Kysely } from 'kysely'
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

export async function countApplications(db: Db): Promise<number> {
  const row = await db
    .selectFrom('applications')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
