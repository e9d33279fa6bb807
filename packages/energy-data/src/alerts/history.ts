/** The alerts as the API shows them: open ones and the recent history, filtered. */
import type pg from 'pg'
import Type, { type Static } from 'typebox'
import type { AlertRow } from './evaluate.ts'

export const ALERT_STATES = ['pending', 'firing', 'resolved'] as const

const Instant = Type.Union([Type.String({ format: 'date-time' }), Type.Null()])

export const Alert = Type.Object({
  id: Type.Integer(),
  rule_id: Type.Union([Type.Integer(), Type.Null()], { description: 'null once the rule was deleted' }),
  rule: Type.String({ description: "The rule's name, the `alertname` label" }),
  state: Type.Enum([...ALERT_STATES], { type: 'string' }),
  labels: Type.Record(Type.String(), Type.String()),
  value: Type.Union([Type.Number(), Type.Null()]),
  summary: Type.String(),
  active_at: Type.String({ format: 'date-time', description: 'Since when the condition holds' }),
  fired_at: Instant,
  resolved_at: Instant,
  updated_at: Type.String({ format: 'date-time' }),
})
export type Alert = Static<typeof Alert>

export function describeAlert(row: AlertRow): Alert {
  return {
    id: Number(row.id),
    rule_id: row.rule_id,
    rule: row.rule_name,
    state: row.state,
    labels: row.labels,
    value: row.value,
    summary: row.summary,
    active_at: row.active_at.toISOString(),
    fired_at: row.fired_at?.toISOString() ?? null,
    resolved_at: row.resolved_at?.toISOString() ?? null,
    updated_at: row.updated_at.toISOString(),
  }
}

export interface AlertFilter {
  state?: (typeof ALERT_STATES)[number] | undefined
  rule?: string | undefined
  datalogger?: string | undefined
  meter?: number | undefined
  /** Resolved alerts ended after this instant. */
  since: Date
  limit: number
}

/** The open alerts and those resolved since `filter.since`, newest first. */
export async function listAlerts(db: Pick<pg.Pool, 'query'>, filter: AlertFilter): Promise<Alert[]> {
  const { rows } = await db.query<AlertRow>(
    `select * from alerts
     where (state <> 'resolved' or resolved_at >= $1)
       and ($2::text is null or state = $2)
       and ($3::text is null or rule_name = $3)
       and ($4::text is null or labels ->> 'datalogger' = $4)
       and ($5::text is null or labels ->> 'meter' = $5)
     order by updated_at desc, id desc limit $6`,
    [
      filter.since,
      filter.state ?? null,
      filter.rule ?? null,
      filter.datalogger ?? null,
      filter.meter === undefined ? null : String(filter.meter),
      filter.limit,
    ],
  )
  return rows.map(describeAlert)
}

/** Deletes the alerts resolved before `before` (their webhook notifications go with them); how many. */
export async function purgeAlertHistory(db: Pick<pg.Pool, 'query'>, before: number): Promise<number> {
  const { rowCount } = await db.query(`delete from alerts where state = 'resolved' and resolved_at < $1`, [
    new Date(before),
  ])
  return rowCount ?? 0
}
