import { type Database, serviceCounter } from '@campus/shared'
import fp from 'fastify-plugin'
import type { OAuthSettings } from '../config.ts'
import type { OAuthDB } from '../db/schema.ts'
import { purgeAuditEvents } from '../repositories/audit-events.ts'
import { deleteExpiredAuthorizationCodes } from '../repositories/codes.ts'
import { deleteExpiredDeviceGrants } from '../repositories/device-grants.ts'
import { deleteExpiredPushedRequests } from '../repositories/pushed-requests.ts'
import { deleteExpiredSessions } from '../repositories/sessions.ts'
import { type Purged, purgeEndedTokens } from '../repositories/token-purge.ts'

const SWEEP_INTERVAL_MS = 10 * 60_000

/** What `/metrics` says of the sweep: tokens purged, by kind. */
export const tokensPurged = () =>
  serviceCounter('oauth_tokens_purged_total', 'Ended tokens purged after the retention, by kind', ['kind'])

/**
 * Decorates `db` and `sweep`: expired sessions, codes, device grants and pushed requests, and tokens ended more
 * than OAUTH_TOKEN_RETENTION_DAYS ago, deleted now and then (any instance may do it; the purge
 * skips rows another instance holds). `purged` is the counter /metrics shows.
 */
export const databasePlugin = fp(
  async (
    app,
    options: {
      database: Database<OAuthDB>
      settings: Pick<OAuthSettings, 'tokenRetentionDays' | 'auditRetentionDays'>
      purged: ReturnType<typeof tokensPurged>
    },
  ) => {
    const { db } = options.database
    app.decorate('db', db)
    const sweep = async (): Promise<Purged> => {
      await deleteExpiredSessions(db)
      await deleteExpiredAuthorizationCodes(db)
      await deleteExpiredDeviceGrants(db)
      await deleteExpiredPushedRequests(db)
      await purgeAuditEvents(db, options.settings.auditRetentionDays ?? 365)
      const purged = await purgeEndedTokens(db, options.settings.tokenRetentionDays)
      for (const [kind, count] of Object.entries(purged)) options.purged.inc({ kind }, count)
      return purged
    }
    app.decorate('sweep', sweep)
    const timer = setInterval(() => {
      sweep().catch((error: unknown) =>
        app.log.warn({ err: error }, 'sweeping expired sessions, codes and tokens failed'),
      )
    }, SWEEP_INTERVAL_MS)
    timer.unref()
    app.addHook('onClose', async () => clearInterval(timer))
  },
  { name: 'oauth-database' },
)
