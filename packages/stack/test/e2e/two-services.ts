/**
 * What the Chromium tests of both services share: a database for each on the test server, both
 * services as their own processes, a Chromium, a scratch folder, and one `close` for all of it.
 * Each test adds what it needs before the services start (users, applications, keys, wiring).
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { launchService, type RunningService } from '@campus/shared'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import type { Browser } from 'playwright-core'
import { seed } from '../../../energy-data/src/commands/seed.ts'
import type { EnergyDatabase } from '../../../energy-data/src/db/schema.ts'
import { energyService } from '../../../energy-data/src/service.ts'
import type { OAuthDB } from '../../../oauth-server/src/db/schema.ts'
import { oauthService } from '../../../oauth-server/src/service.ts'
import { launchChromium } from '../../../oauth-server/test/e2e/chromium.ts'

export const PASSWORD = 'correct horse battery staple'
const DAY_MS = 86_400_000

export interface TwoServices {
  oauthDb: TestDatabase<OAuthDB>
  energyDb: TestDatabase<EnergyDatabase>
  oauth: RunningService
  energy: RunningService
  browser: Browser
  /** A scratch folder, removed by `close`. */
  dir: string
  close(): Promise<void>
}

/** What a test sets up on the databases before the services start, and how they start. */
export interface Preparation {
  oauthEnv?: Record<string, string>
  energyEnv?: Record<string, string>
  oauthPort?: number
  energyPort?: number
}

/** The days around today, so the dashboard's default windows have data. */
export async function seedRecentDays(energyDb: TestDatabase<EnergyDatabase>): Promise<void> {
  const now = Date.now()
  await seed(energyDb.pool, {
    from: new Date(now - 2 * DAY_MS).toISOString().slice(0, 10),
    to: new Date(now + DAY_MS).toISOString().slice(0, 10),
  })
}

export async function startTwoServices(options: {
  /** Names the scratch folder. */
  name: string
  /** The data API's database; default: a fresh one, seeded around today. */
  energyDatabase?: () => Promise<TestDatabase<EnergyDatabase>>
  prepare?: (ready: {
    oauthDb: TestDatabase<OAuthDB>
    energyDb: TestDatabase<EnergyDatabase>
    dir: string
  }) => Preparation | Promise<Preparation>
}): Promise<TwoServices> {
  const dir = mkdtempSync(join(tmpdir(), `${options.name}-`))
  const opened: Partial<TwoServices> = { dir }
  const close = async () => {
    await opened.browser?.close()
    await Promise.all([opened.oauth?.stop(), opened.energy?.stop()])
    await Promise.all([opened.oauthDb?.close(), opened.energyDb?.close()])
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const oauthDb = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
    opened.oauthDb = oauthDb
    const energyDb = options.energyDatabase
      ? await options.energyDatabase()
      : await createTestDatabase<EnergyDatabase>('energy', energyService.migrationsDir)
    opened.energyDb = energyDb
    if (!options.energyDatabase) await seedRecentDays(energyDb)
    const preparation = (await options.prepare?.({ oauthDb, energyDb, dir })) ?? {}
    const common = { LOG_LEVEL: 'warn', MIGRATE_ON_START: 'false' }
    const [oauth, energy] = await Promise.all([
      launchService(oauthService, {
        port: preparation.oauthPort,
        env: {
          ...common,
          OAUTH_DATABASE_URL: oauthDb.url,
          OAUTH_SECRET_KEY: randomBytes(32).toString('hex'),
          DATA_DIR: dir,
          ...preparation.oauthEnv,
        },
      }),
      launchService(energyService, {
        port: preparation.energyPort,
        env: { ...common, ENERGY_DATABASE_URL: energyDb.url, ...preparation.energyEnv },
      }),
    ])
    Object.assign(opened, { oauth, energy })
    opened.browser = await launchChromium()
    return { ...(opened as TwoServices), close }
  } catch (error) {
    await close()
    throw error
  }
}
