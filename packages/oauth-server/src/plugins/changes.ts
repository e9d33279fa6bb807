import fp from 'fastify-plugin'
import type pg from 'pg'
import { changeMechanism } from '../changes/commit.ts'
import type { OAuthApp } from '../oauth-app.ts'

/**
 * Decorates `changes` (see changes/commit.ts). Other instances' changes are heard through
 * LISTEN/NOTIFY on a connection of `pool`. The embedded database has no such channel, yet the
 * command line writes to it from its own process while the stack runs: there, nothing is cached,
 * so what `pnpm oauth ...` changes holds at once.
 */
export const changesPlugin = fp(
  async (app, options: { pool: pg.Pool; crossInstance: boolean }) => {
    const { db, settings } = app as OAuthApp
    const crossInstance = settings.tokenCacheSeconds > 0 && options.crossInstance
    const changes = changeMechanism(db, {
      cacheSeconds: crossInstance ? settings.tokenCacheSeconds : 0,
      notify: crossInstance,
      pool: crossInstance ? options.pool : undefined,
      cacheSync: settings.cacheSync,
      lost: (error) => app.log.warn({ err: error }, 'cache invalidation channel lost; caching off until it is back'),
    })
    app.decorate('changes', changes)
    // preClose: the pool's own onClose (added by whoever owns it) waits for the listening connection
    app.addHook('preClose', async () => changes.close())
  },
  { name: 'oauth-changes', dependencies: ['oauth-settings', 'oauth-database'] },
)
