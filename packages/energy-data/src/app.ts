import { type Database, readMigrations, registerPlatform, serverOptions } from '@campus/shared'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { EnergyConfig } from './config.ts'
import { publicViews } from './dashboard/plugin.ts'
import type { EnergyDatabase } from './db/schema.ts'
import { isTimeZone } from './domain/time.ts'
import { energyErrors } from './errors.ts'
import { apiKeySecurityScheme, authPlugin } from './plugins/auth.ts'
import { rateLimitPlugin } from './plugins/rate-limit.ts'
import { authRoutes } from './routes/auth.ts'
import { dataRoutes } from './routes/data.ts'
import { metadataRoutes } from './routes/metadata.ts'
import { energyService } from './service.ts'

/** The settings the app reads; defaults match the configuration's. */
export type EnergySettings = Pick<
  EnergyConfig,
  | 'ENERGY_TIMEZONE'
  | 'ENERGY_MAX_ROWS'
  | 'ENERGY_MAX_STREAMS'
  | 'ENERGY_REQUIRE_KEY_EVERYWHERE'
  | 'ENERGY_RATE_LIMIT_PUBLIC'
  | 'ENERGY_RATE_LIMIT_KEY'
  | 'ENERGY_RATE_LIMIT_PREFIX'
  | 'REDIS_URL'
  | 'METRICS_TOKEN'
>

const DEFAULT_SETTINGS: EnergySettings = {
  ENERGY_TIMEZONE: 'Europe/Rome',
  ENERGY_MAX_ROWS: 500_000,
  ENERGY_MAX_STREAMS: 32,
  ENERGY_REQUIRE_KEY_EVERYWHERE: false,
  ENERGY_RATE_LIMIT_PUBLIC: 120,
  ENERGY_RATE_LIMIT_KEY: 600,
  ENERGY_RATE_LIMIT_PREFIX: 'energy-rl:',
  REDIS_URL: undefined,
}

export interface EnergyAppOptions {
  database: Database<unknown>
  logLevel?: string
  settings?: Partial<EnergySettings>
  /** Clock of the default data window (tests pin it). */
  now?: () => number
}

/** The data API as a Fastify instance, not listening. */
export async function buildApp(options: EnergyAppOptions): Promise<FastifyInstance> {
  const settings = { ...DEFAULT_SETTINGS, ...options.settings }
  if (!isTimeZone(settings.ENERGY_TIMEZONE)) {
    throw new Error(`ENERGY_TIMEZONE ${JSON.stringify(settings.ENERGY_TIMEZONE)} is not an IANA time zone name`)
  }
  const db = options.database.db as Kysely<EnergyDatabase>
  const app = Fastify(
    serverOptions('energy-data', options.logLevel ?? 'silent', energyErrors),
  ).withTypeProvider<TypeBoxTypeProvider>()
  await registerPlatform(app, {
    service: 'energy-data',
    errors: energyErrors,
    db: options.database.db as never,
    migrations: readMigrations(energyService.migrationsDir),
    metricsToken: settings.METRICS_TOKEN,
    openapi: {
      info: {
        title: 'data API',
        version: '1.0.3',
        description: 'Energy, water and weather measurements of the campus in 15-minute buckets.',
        license: { name: 'Apache 2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0.html' },
      },
      tags: [
        { name: 'Metadata', description: 'Metadata of the monitoring infrastructure' },
        { name: 'Data', description: 'Values from installed metering points' },
        { name: 'Report', description: 'Internal reports' },
        { name: 'Chart', description: 'Chart configuration for a website' },
        { name: 'Developers', description: 'Calls for development tests' },
      ],
      securitySchemes: apiKeySecurityScheme,
      healthTags: ['Developers'],
    },
  })

  // Guards first: every route registered after these two is authenticated and rate limited
  // according to its `config.auth` (see plugins/auth.ts).
  await app.register(authPlugin, { db, requireKeyEverywhere: settings.ENERGY_REQUIRE_KEY_EVERYWHERE })
  await app.register(rateLimitPlugin, {
    publicPerMinute: settings.ENERGY_RATE_LIMIT_PUBLIC,
    keyPerMinute: settings.ENERGY_RATE_LIMIT_KEY,
    redisUrl: settings.REDIS_URL,
    redisPrefix: settings.ENERGY_RATE_LIMIT_PREFIX,
  })

  await app.register(authRoutes)
  await app.register(metadataRoutes, { db })
  await app.register(dataRoutes, {
    db,
    pool: options.database.pool,
    zone: settings.ENERGY_TIMEZONE,
    maxRows: settings.ENERGY_MAX_ROWS,
    maxStreams: settings.ENERGY_MAX_STREAMS,
    now: options.now,
  })
  await app.register(publicViews, { db, zone: settings.ENERGY_TIMEZONE, now: options.now ?? Date.now })
  return app
}
