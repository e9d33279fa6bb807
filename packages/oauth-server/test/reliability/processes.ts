import { randomBytes } from 'node:crypto'
import { launchService, type RunningService } from '@campus/shared'
import { needsService } from '@campus/shared/testing'
import { describe } from 'vitest'
import { oauthService } from '../../src/service.ts'

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** A real oauth-server process on `databaseUrl` (migrated already), on a free loopback port. */
export function startOAuthProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<RunningService> {
  return launchService(oauthService, { env: { OAUTH_DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...env } })
}

/** Settings every instance of one deployment shares: sealing key and Redis key prefix. */
export function sharedDeployment(): Record<string, string> {
  return {
    OAUTH_SECRET_KEY: randomBytes(32).toString('hex'),
    REDIS_URL,
    OAUTH_REDIS_PREFIX: `test-${randomBytes(6).toString('hex')}:`,
  }
}

/**
 * For what only a PostgreSQL server has: row-lock waits seen in pg_stat_activity, LISTEN/NOTIFY
 * between processes, pg_dump. The embedded PGlite fallback (no TEST_DATABASE_URL) serves one
 * process and one transaction at a time, so these suites run only on PostgreSQL (as CI does).
 */
export const postgresServer = await needsService('tests that need a PostgreSQL server', 'TEST_DATABASE_URL')
export const onPostgresServer = describe.runIf(postgresServer)
