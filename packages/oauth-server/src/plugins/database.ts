import type { Database } from '@campus/shared'
import fp from 'fastify-plugin'
import type { OAuthDB } from '../db/schema.ts'
import { deleteExpiredAuthorizationCodes } from '../repositories/codes.ts'
import { deleteExpiredDeviceGrants } from '../repositories/device-grants.ts'
import { deleteExpiredSessions } from '../repositories/sessions.ts'

const SWEEP_INTERVAL_MS = 10 * 60_000

/** Decorates `db`; sweeps expired sessions, codes and device grants now and then (any instance may do it). */
export const databasePlugin = fp(
  async (app, options: { database: Database<OAuthDB> }) => {
    const { db } = options.database
    app.decorate('db', db)
    const sweep = setInterval(() => {
      deleteExpiredSessions(db)
        .then(() => deleteExpiredAuthorizationCodes(db))
        .then(() => deleteExpiredDeviceGrants(db))
        .catch((error: unknown) => app.log.warn({ err: error }, 'sweeping expired sessions and codes failed'))
    }, SWEEP_INTERVAL_MS)
    sweep.unref()
    app.addHook('onClose', async () => clearInterval(sweep))
  },
  { name: 'oauth-database' },
)
