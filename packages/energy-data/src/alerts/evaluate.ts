/**
 * One evaluation of every rule, with Prometheus's `for` semantics: a condition that starts to hold
 * makes a pending alert; one that has held for the rule's `for` fires it; a pending alert whose
 * condition ends is dropped (it never was), a firing one is resolved and kept as history. The
 * state changes and the webhook's notifications of them are written in one transaction.
 */
import { createHash } from 'node:crypto'
import { notifyChange } from '@campus/shared'
import type pg from 'pg'
import { observe } from './conditions.ts'
import { listRules } from './rules.ts'

/** Told by an evaluation that changed an alert, on its commit: every instance's streams catch up. */
export const ALERTS_CHANNEL = 'energy_alerts_changed'

/** PostgreSQL advisory lock key of the evaluation: one evaluator at a time across every instance. */
const EVALUATION_LOCK = 0x656e_6572 // "ener"

export type AlertState = 'pending' | 'firing' | 'resolved'

export interface AlertRow {
  id: string
  rule_id: number | null
  rule_name: string
  subject: string
  labels: Record<string, string>
  state: AlertState
  value: number | null
  summary: string
  active_at: Date
  fired_at: Date | null
  resolved_at: Date | null
  updated_at: Date
}

/** Alertmanager's zero time: the `endsAt` of an alert still firing in a webhook notification. */
const ZERO_TIME = '0001-01-01T00:00:00Z'

/** Alertmanager's fingerprint role: a stable hash of the label set. */
export function fingerprint(labels: Record<string, string>): string {
  const text = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join('\u0000')
  return createHash('sha256').update(text).digest('hex').slice(0, 16)
}

/** One alert in Alertmanager's shape (the API's `postableAlert`, the webhook's `alerts[]`). */
export function alertmanagerAlert(alert: AlertRow, generatorURL: string) {
  return {
    status: alert.state === 'resolved' ? ('resolved' as const) : ('firing' as const),
    labels: alert.labels,
    annotations: { summary: alert.summary },
    startsAt: (alert.fired_at ?? alert.active_at).toISOString(),
    endsAt: alert.resolved_at?.toISOString() ?? ZERO_TIME,
    generatorURL,
    fingerprint: fingerprint(alert.labels),
  }
}

/** The webhook body of one state change: Alertmanager's webhook format, version 4. */
export function webhookMessage(alert: AlertRow, externalURL: string) {
  const one = alertmanagerAlert(alert, `${externalURL}/alerts?rule=${encodeURIComponent(alert.rule_name)}`)
  return {
    version: '4',
    groupKey: `{}:{alertname=${JSON.stringify(alert.rule_name)}}`,
    truncatedAlerts: 0,
    status: one.status,
    receiver: 'energy-data',
    groupLabels: { alertname: alert.rule_name },
    commonLabels: alert.labels,
    commonAnnotations: one.annotations,
    externalURL,
    alerts: [one],
  }
}

export interface EvaluationOptions {
  now: number
  zone: string
  /** Where the webhook's notifications point back to (the service's URL); undefined: no webhook, no outbox. */
  webhookExternalUrl: string | undefined
}

export interface Evaluation {
  /** The alerts whose state changed, as they are now. */
  changed: AlertRow[]
}

/**
 * Evaluates every rule, unless another instance is doing so right now (then undefined: its
 * result reaches this one through the table).
 */
export async function evaluateRules(pool: pg.Pool, options: EvaluationOptions): Promise<Evaluation | undefined> {
  const client = await pool.connect()
  try {
    await client.query('begin')
    const { rows: locked } = await client.query<{ ok: boolean }>('select pg_try_advisory_xact_lock($1) as ok', [
      EVALUATION_LOCK,
    ])
    if (!locked[0]?.ok) {
      await client.query('rollback')
      return undefined
    }
    const changed = await transitions(client, options)
    if (changed.length > 0) await notifyChange(client, ALERTS_CHANNEL, String(changed.length))
    await client.query('commit')
    return { changed }
  } catch (error) {
    await client.query('rollback').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

async function transitions(client: pg.PoolClient, options: EvaluationOptions): Promise<AlertRow[]> {
  const now = new Date(options.now)
  const rules = await listRules(client)
  const { rows: open } = await client.query<AlertRow>(
    `select * from alerts where state <> 'resolved' order by id for update`,
  )
  const openOf = new Map(open.map((a) => [`${a.rule_id}/${a.subject}`, a]))
  const seen = new Set<string>()
  const changed: AlertRow[] = []
  for (const rule of rules) {
    for (const o of await observe(client, rule, options.now, options.zone)) {
      const key = `${rule.id}/${o.subject}`
      seen.add(key)
      const labels = { alertname: rule.name, ...o.labels, severity: rule.severity, kind: rule.kind }
      const current = openOf.get(key)
      if (!current) {
        const firing = rule.for_seconds === 0
        const { rows } = await client.query<AlertRow>(
          `insert into alerts (rule_id, rule_name, subject, labels, state, value, summary, active_at, fired_at, updated_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $8) returning *`,
          [
            rule.id,
            rule.name,
            o.subject,
            labels,
            firing ? 'firing' : 'pending',
            o.value,
            o.summary,
            now,
            firing ? now : null,
          ],
        )
        changed.push(rows[0] as AlertRow)
      } else if (current.state === 'pending' && options.now - current.active_at.getTime() >= rule.for_seconds * 1000) {
        const { rows } = await client.query<AlertRow>(
          `update alerts set state = 'firing', fired_at = $2, updated_at = $2, value = $3, summary = $4
           where id = $1 returning *`,
          [current.id, now, o.value, o.summary],
        )
        changed.push(rows[0] as AlertRow)
      } else {
        // the value moves on while the state stays: no change to announce
        await client.query('update alerts set value = $2, summary = $3 where id = $1', [current.id, o.value, o.summary])
      }
    }
  }
  for (const alert of open) {
    if (seen.has(`${alert.rule_id}/${alert.subject}`)) continue
    if (alert.state === 'pending') {
      // Prometheus forgets a pending alert whose condition ends: it never fired
      await client.query('delete from alerts where id = $1', [alert.id])
      changed.push({ ...alert, state: 'resolved', resolved_at: now, updated_at: now })
      continue
    }
    const { rows } = await client.query<AlertRow>(
      `update alerts set state = 'resolved', resolved_at = $2, updated_at = $2 where id = $1 returning *`,
      [alert.id, now],
    )
    changed.push(rows[0] as AlertRow)
  }
  if (options.webhookExternalUrl !== undefined) {
    for (const alert of changed) {
      // a notification for what fired or resolved; a pending alert is nobody's business yet
      if (alert.state === 'pending' || alert.fired_at === null) continue
      await client.query(
        `insert into alert_outbox (alert_id, idempotency_key, body) values ($1, $2, $3)
         on conflict (idempotency_key) do nothing`,
        [alert.id, `alert-${alert.id}-${alert.state}`, webhookMessage(alert, options.webhookExternalUrl)],
      )
    }
  }
  return changed
}
