/**
 * The alerts' clockwork in each data API instance: a tick on a timer and on every commit of the
 * write path (its change notice), which evaluates the rules (one instance at a time: an advisory
 * lock), delivers what is due, and tells this instance's listeners (the server-sent event streams)
 * what changed.
 */
import type pg from 'pg'
import { type DeliveryLog, deliverToAlertmanager, deliverWebhooks, type WebhookTarget } from './delivery.ts'
import { type AlertRow, evaluateRules } from './evaluate.ts'
import { purgeAlertHistory } from './history.ts'

export interface AlertSettings {
  /** How often the rules are evaluated without a change notice (ALERT_EVALUATION_SECONDS). */
  evaluationMs: number
  /** Prometheus Alertmanager (ALERTMANAGER_URL); undefined: none. */
  alertmanagerUrl?: string | undefined
  /** How often a firing alert is sent to Alertmanager again (ALERTMANAGER_RESEND_SECONDS). */
  resendMs: number
  /** The webhook (ALERT_WEBHOOK_URL, ALERT_WEBHOOK_SECRET); undefined: none. */
  webhook?: WebhookTarget | undefined
  /** The URL receivers are pointed back to (ALERT_EXTERNAL_URL). */
  externalUrl: string
  /** How long a resolved alert stays in the history (ALERT_HISTORY_RETENTION_DAYS). */
  historyRetentionMs: number
}

/** How often an instance purges the history past its retention (each instance; the delete is idempotent). */
const PURGE_EVERY_MS = 3_600_000

export type AlertListener = (alert: AlertRow) => void

export interface DataloggerAge {
  datalogger: string
  /** Seconds since its newest sample arrived; null: none ever. */
  ageSeconds: number | null
}

export interface AlertEngine {
  /** Starts the timer (and a first tick at once). */
  start(): void
  /** Evaluates and delivers now (a tick already running is followed by one more). */
  tick(): Promise<void>
  /** Called with each alert whose state changes; returns the unsubscribe. */
  subscribe(listener: AlertListener): () => void
  /** Called after each tick (the live view refreshes); returns the unsubscribe. */
  onTick(listener: () => void): () => void
  /** The alerts open at the last tick (metrics). */
  open(): readonly AlertRow[]
  /** Each datalogger's last-sample age at the last tick (metrics). */
  dataloggerAges(): readonly DataloggerAge[]
  close(): Promise<void>
}

export function createAlertEngine(options: {
  pool: pg.Pool
  settings: AlertSettings
  zone: string
  now: () => number
  log: DeliveryLog & { error(o: object, m: string): void }
}): AlertEngine {
  const { pool, settings, log } = options
  const listeners = new Set<AlertListener>()
  const tickListeners = new Set<() => void>()
  let open: AlertRow[] = []
  let ages: DataloggerAge[] = []
  let cursor = new Date(options.now())
  let purgedAt = Number.NEGATIVE_INFINITY
  let running: Promise<void> | undefined
  let again = false
  let closed = false

  async function once(): Promise<void> {
    const now = options.now()
    const evaluation = await evaluateRules(pool, {
      now,
      zone: options.zone,
      webhookExternalUrl: settings.webhook ? settings.externalUrl : undefined,
    })
    if (evaluation && settings.alertmanagerUrl) {
      await deliverToAlertmanager(
        pool,
        {
          url: settings.alertmanagerUrl,
          resendMs: settings.resendMs,
          now,
          generatorURL: `${settings.externalUrl}/alerts`,
        },
        log,
      )
    }
    if (settings.webhook) await deliverWebhooks(pool, settings.webhook, log)
    if (now - purgedAt >= PURGE_EVERY_MS) {
      await purgeAlertHistory(pool, now - settings.historyRetentionMs)
      purgedAt = now
    }
    // what changed since this instance last looked, whoever evaluated it
    const { rows: changed } = await pool.query<AlertRow>(
      'select * from alerts where updated_at > $1 order by updated_at, id',
      [cursor],
    )
    const gone = (evaluation?.changed ?? []).filter((a) => a.fired_at === null && a.state === 'resolved')
    for (const alert of [...changed, ...gone]) {
      if (alert.updated_at > cursor) cursor = alert.updated_at
      for (const listener of listeners) listener(alert)
    }
    open = (await pool.query<AlertRow>(`select * from alerts where state <> 'resolved' order by id`)).rows
    ages = (
      await pool.query<{ datalogger: string; age: number | null }>(
        `select d.id as datalogger, extract(epoch from $1::timestamptz - max(l.received_at))::float8 as age
         from dataloggers d left join meters m on m.datalogger_id = d.id left join meter_latest l on l.meter_id = m.id
         where d.date_to is null or d.date_to > $1
         group by d.id order by d.id`,
        [new Date(now)],
      )
    ).rows.map((r) => ({ datalogger: r.datalogger, ageSeconds: r.age }))
    for (const listener of tickListeners) listener()
  }

  function tick(): Promise<void> {
    if (closed) return Promise.resolve()
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      do {
        again = false
        try {
          await once()
        } catch (error) {
          log.error({ err: error }, 'alerts: evaluation failed; tried again at the next tick')
        }
      } while (again && !closed)
    })().finally(() => {
      running = undefined
    })
    return running
  }

  let timer: NodeJS.Timeout | undefined
  return {
    start() {
      if (timer || closed) return
      timer = setInterval(() => void tick(), settings.evaluationMs)
      timer.unref()
      void tick()
    },
    tick,
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    onTick(listener) {
      tickListeners.add(listener)
      return () => tickListeners.delete(listener)
    },
    open: () => open,
    dataloggerAges: () => ages,
    async close() {
      closed = true
      clearInterval(timer)
      await running
    },
  }
}
