import { type Insertable, type Selectable, sql } from 'kysely'
import type { AuditEventsTable } from '../db/schema.ts'
import type { Db } from './tokens.ts'

export type AuditEventRow = Selectable<AuditEventsTable>
export type NewAuditEvent = Insertable<AuditEventsTable>

export async function insertAuditEvents(db: Db, events: readonly NewAuditEvent[]): Promise<void> {
  if (events.length)
    await db
      .insertInto('audit_events')
      .values([...events])
      .execute()
}

/** GitLab's filters of GET /audit_events. */
export interface AuditFilter {
  createdAfter?: Date | undefined
  createdBefore?: Date | undefined
  entityType?: string | undefined
  entityId?: number | undefined
}

function filtered(db: Db, filter: AuditFilter) {
  return db
    .selectFrom('audit_events')
    .$if(filter.createdAfter !== undefined, (q) => q.where('created_at', '>=', filter.createdAfter as Date))
    .$if(filter.createdBefore !== undefined, (q) => q.where('created_at', '<=', filter.createdBefore as Date))
    .$if(filter.entityType !== undefined, (q) => q.where('entity_type', '=', filter.entityType as string))
    .$if(filter.entityId !== undefined, (q) => q.where('entity_id', '=', filter.entityId as number))
}

/** A page of events, newest first, and how many match. */
export async function listAuditEvents(
  db: Db,
  filter: AuditFilter,
  page: { limit: number; offset: number },
): Promise<{ rows: AuditEventRow[]; total: number }> {
  const rows = await filtered(db, filter)
    .selectAll()
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute()
  const count = await filtered(db, filter)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow()
  return { rows, total: Number(count.n) }
}

export async function findAuditEvent(db: Db, id: number): Promise<AuditEventRow | undefined> {
  return db.selectFrom('audit_events').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Deletes events older than the retention, a batch at a time; how many went. */
export async function purgeAuditEvents(db: Db, retentionDays: number): Promise<number> {
  let purged = 0
  for (;;) {
    const result = await sql<{ id: number }>`
      delete from audit_events where id in (
        select id from audit_events where created_at < now() - make_interval(days => ${retentionDays})
        order by created_at limit 1000 for update skip locked)
      returning id`.execute(db)
    purged += result.rows.length
    if (result.rows.length < 1000) return purged
  }
}
