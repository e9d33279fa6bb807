import { listenForChanges } from '@campus/shared'
import fp from 'fastify-plugin'
import pg from 'pg'
import type { AlertEngine } from '../alerts/engine.ts'
import { ALERTS_CHANNEL } from '../alerts/evaluate.ts'
import { MEASUREMENTS_CHANNEL } from '../repositories/measurement-changes.ts'

/** How long a burst of commits is gathered into one evaluation. */
const DEBOUNCE_MS = 200

/**
 * Decorates `alerts`: the engine built with the app (its metrics are the platform's), ticking
 * on its timer and, with a PostgreSQL server (`listenUrl`), on each commit of the write path and
 * each evaluation of another instance that changed an alert (its streams then push it), heard on
 * connections of their own. The embedded database passes on no other process's commits: there the
 * timer alone evaluates.
 */
export const alertsPlugin = fp(
  async (app, options: { engine: AlertEngine; listenUrl: string | undefined }) => {
    const { engine } = options
    app.decorate('alerts', engine)
    let pending: NodeJS.Timeout | undefined
    const listening = options.listenUrl
      ? new pg.Pool({ connectionString: options.listenUrl, max: 2, application_name: 'energy-data alerts' })
      : undefined
    listening?.on('error', () => {})
    const soon = () => {
      pending ??= setTimeout(() => {
        pending = undefined
        void engine.tick()
      }, DEBOUNCE_MS)
    }
    const lost = (error: unknown) =>
      app.log.warn({ err: error }, 'alerts: change notices lost; the timer alone evaluates until they are back')
    const listeners = listening
      ? [
          listenForChanges(listening, MEASUREMENTS_CHANNEL, {
            changed: soon,
            listening: () => void engine.tick(),
            lost,
          }),
          // another instance's evaluation: this one's tick reads what it changed (its own evaluation changes nothing more)
          listenForChanges(listening, ALERTS_CHANNEL, { changed: () => void engine.tick(), listening: () => {}, lost }),
        ]
      : []
    app.addHook('onReady', async () => engine.start())
    // evaluation stops as the service begins to close, while its database is still there
    app.addHook('preClose', async () => {
      if (pending) clearTimeout(pending)
      await engine.close()
    })
    app.addHook('onClose', async () => {
      if (pending) clearTimeout(pending)
      for (const listener of listeners) await listener.close()
      await listening?.end()
      await engine.close()
    })
  },
  { name: 'energy-alerts', dependencies: ['energy-settings', 'energy-database'] },
)
