import { notifyChange } from '@campus/shared'
import fp from 'fastify-plugin'
import pg from 'pg'
import type { Replicas } from '../db/replicas.ts'
import type { EnergyApp } from '../energy-app.ts'
import { createExporter } from '../export/export.ts'
import { createWindowCache } from '../export/window-cache.ts'
import { MEASUREMENTS_CHANNEL } from '../repositories/measurement-changes.ts'

/**
 * Decorates `exporter`: one per process, so its concurrency gate counts every export of the
 * process, and its cache of past windows (see export/window-cache.ts) serves every request.
 * The cache hears other instances' imports on a connection of its own to `listenUrl` (not one
 * of the query pool's few); without it (the embedded database, which one process serves
 * alone) nothing is cached.
 */
export const exporterPlugin = fp(
  async (app, options: { listenUrl: string | undefined; replicas?: Replicas | undefined }) => {
    const { pool, settings, now } = app as EnergyApp
    const listening =
      options.listenUrl && settings.cacheBytes > 0
        ? new pg.Pool({ connectionString: options.listenUrl, max: 1, application_name: 'energy-data cache' })
        : undefined
    // a connection lost while idle is reported by the listener itself: the pool must not crash the process
    listening?.on('error', () => {})
    const cache = createWindowCache({
      maxBytes: settings.cacheBytes,
      pool: listening,
      lost: (error) => app.log.warn({ err: error }, 'data cache channel lost; caching off until it is back'),
      notify: (payload) => notifyChange(pool, MEASUREMENTS_CHANNEL, payload),
      // read from standbys: a change is over for the cache once every standby has replayed it
      replicas: options.replicas,
      // the embedded database serves no LISTEN/NOTIFY across connections: a fact of it, not a fault
      deaf: () =>
        app.log.info(
          'data cache off: this database does not pass on changes made by other processes, so every answer is read afresh (a PostgreSQL server turns the cache on)',
        ),
    })
    // ready once the cache knows whether changes reach it: an instance that answers caches or does not, never "not yet"
    await cache.settled
    app.decorate(
      'exporter',
      createExporter({
        readPool: options.replicas ? () => (options.replicas as Replicas).pick() : () => pool,
        maxRows: settings.maxRows,
        maxStreams: settings.maxStreams,
        maxStreamsPerHolder: settings.maxStreamsPerCredential,
        streamIdleMs: settings.streamIdleSeconds * 1000,
        cache,
        now,
      }),
    )
    app.addHook('onClose', async () => {
      await cache.close()
      await listening?.end()
    })
  },
  { name: 'energy-exporter', dependencies: ['energy-settings', 'energy-database'] },
)
