/**
 * Delivery of alerts: to Prometheus Alertmanager (its API v2, each firing alert re-sent while it
 * fires so that Alertmanager keeps it, each resolved one sent with its `endsAt`), and to a webhook
 * from the outbox the evaluation fills, signed, with an idempotency key, retried with backoff.
 */
import { createHmac } from 'node:crypto'
import type pg from 'pg'
import { type AlertRow, alertmanagerAlert } from './evaluate.ts'

/** How long one request to a receiver may take. */
const REQUEST_TIMEOUT_MS = 10_000
/** The outbox's backoff: 2 s, doubling, at most 5 min between attempts. */
const RETRY_MIN_S = 2
const RETRY_MAX_S = 300
/** A claimed notification not settled within this (the process died sending it) is sent again. */
const CLAIM_SECONDS = 60
/** How long a resolved alert is still sent to Alertmanager (as Prometheus does, 15 min). */
const RESOLVED_RESEND_MS = 15 * 60_000

export interface WebhookTarget {
  url: string
  secret: string
}

/** The signature header: HMAC-SHA256 of the exact body with the shared secret, hex (`sha256=` prefix). */
export const SIGNATURE_HEADER = 'x-energy-signature'

export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

interface OutboxRow {
  id: string
  idempotency_key: string
  body: unknown
  attempts: number
}

/**
 * Sends the notifications due, oldest first, each alert's in order (one waits while an earlier
 * one of its alert is unsent). A notification is claimed before it is sent, so two instances
 * never send it at once, and marked sent only after the receiver's 2xx: a process that dies in
 * between sends it again with the same idempotency key. How many were sent.
 */
export async function deliverWebhooks(pool: pg.Pool, target: WebhookTarget, log: DeliveryLog): Promise<number> {
  const { rows } = await pool.query<OutboxRow>(
    `update alert_outbox set attempts = attempts + 1, next_attempt_at = now() + interval '${CLAIM_SECONDS} seconds'
     where id in (
       select o.id from alert_outbox o
       where o.sent_at is null and o.next_attempt_at <= now()
         and not exists (select 1 from alert_outbox e where e.alert_id = o.alert_id and e.id < o.id and e.sent_at is null)
       order by o.id limit 20 for update skip locked
     )
     returning id, idempotency_key, body, attempts`,
  )
  let sent = 0
  for (const row of rows.sort((a, b) => Number(a.id) - Number(b.id))) {
    const body = JSON.stringify(row.body)
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': row.idempotency_key,
          [SIGNATURE_HEADER]: signBody(target.secret, body),
        },
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      })
      await response.body?.cancel()
      if (!response.ok) throw new Error(`the webhook answered ${response.status}`)
      await pool.query('update alert_outbox set sent_at = now(), last_error = null where id = $1', [row.id])
      sent++
    } catch (error) {
      const delay = Math.min(RETRY_MIN_S * 2 ** (row.attempts - 1), RETRY_MAX_S)
      const reason = error instanceof Error ? error.message : String(error)
      await pool.query(
        `update alert_outbox set next_attempt_at = now() + make_interval(secs => $2), last_error = $3 where id = $1`,
        [row.id, delay, reason],
      )
      log.warn({ key: row.idempotency_key, attempts: row.attempts, retryInSeconds: delay }, `alert webhook: ${reason}`)
    }
  }
  return sent
}

export interface DeliveryLog {
  warn(o: object, m: string): void
}

/**
 * Sends Alertmanager what it must hold: every firing alert not sent within `resendMs`, every
 * alert resolved within the last 15 minutes not sent since it resolved (or within `resendMs`).
 * A firing alert's `endsAt` lies four resends ahead, so Alertmanager resolves it by itself if
 * this service stops for good (Prometheus's rule). How many were sent.
 */
export async function deliverToAlertmanager(
  pool: pg.Pool,
  options: { url: string; resendMs: number; now: number; generatorURL: string },
  log: DeliveryLog,
): Promise<number> {
  const now = new Date(options.now)
  const { rows } = await pool.query<AlertRow>(
    `select * from alerts
     where (state = 'firing' and (alertmanager_sent_at is null or alertmanager_sent_at <= $1::timestamptz - make_interval(secs => $2)))
        or (state = 'resolved' and fired_at is not null and resolved_at > $1::timestamptz - make_interval(secs => $3)
            and (alertmanager_sent_at is null or alertmanager_sent_at < resolved_at
                 or alertmanager_sent_at <= $1::timestamptz - make_interval(secs => $2)))
     order by id`,
    [now, options.resendMs / 1000, RESOLVED_RESEND_MS / 1000],
  )
  if (rows.length === 0) return 0
  const payload = rows.map((alert) => {
    const { status: _status, fingerprint: _fingerprint, ...posted } = alertmanagerAlert(alert, options.generatorURL)
    return alert.state === 'resolved'
      ? posted
      : { ...posted, endsAt: new Date(options.now + 4 * options.resendMs).toISOString() }
  })
  try {
    const response = await fetch(`${options.url.replace(/\/+$/, '')}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`Alertmanager answered ${response.status}: ${text.slice(0, 200)}`)
  } catch (error) {
    log.warn({ alerts: rows.length }, `alertmanager: ${error instanceof Error ? error.message : String(error)}`)
    return 0
  }
  await pool.query('update alerts set alertmanager_sent_at = $2 where id = any($1::bigint[])', [
    rows.map((r) => r.id),
    now,
  ])
  return rows.length
}
