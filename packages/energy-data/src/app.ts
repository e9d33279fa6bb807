import { readFileSync } from 'node:fs'
import {
  type CorsPolicy,
  type Database,
  isEmbedded,
  readMigrations,
  registerPlatform,
  serverOptions,
  serviceGauge,
} from '@campus/shared'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { createAlertEngine } from './alerts/engine.ts'
import { alertMetrics } from './alerts/metrics.ts'
import { defaultSettings, type EnergySettings } from './config.ts'
import { openReplicas } from './db/replicas.ts'
import type { EnergyDatabase } from './db/schema.ts'
import { databaseZonesRegistered, isTimeZone, registerDatabaseZones } from './domain/time.ts'
import { energyErrors } from './errors.ts'
import { alertsPlugin } from './plugins/alerts.ts'
import { authPlugin, READ_ENERGY, securitySchemes } from './plugins/auth.ts'
import { databasePlugin } from './plugins/database.ts'
import { exporterPlugin } from './plugins/exporter.ts'
import { rateLimitPlugin } from './plugins/rate-limit.ts'
import { settingsPlugin } from './plugins/settings.ts'
import { buildCalendar } from './repositories/rollups.ts'
import { databaseZoneNames } from './repositories/zones.ts'
import { alertRoutes } from './routes/alerts.ts'
import { authRoutes } from './routes/auth.ts'
import { chartRoutes } from './routes/charts.ts'
import { dashboardRoutes } from './routes/dashboard.ts'
import { dataRoutes } from './routes/data.ts'
import { metadataRoutes } from './routes/metadata.ts'
import { reportRoutes } from './routes/reports.ts'
import { resourceMetadataRoutes } from './routes/resource-metadata.ts'
import { energyService } from './service.ts'

const ICON = readFileSync(new URL('./dashboard/assets/icon.svg', import.meta.url), 'utf8')

export interface EnergyAppOptions {
  database: Database<EnergyDatabase>
  logLevel?: string
  /** Default: every variable at its default (`defaultSettings()`). */
  settings?: EnergySettings
  /** Clock of the default data windows (tests pin it). */
  now?: () => number
}

/**
 * The rollups' days and months in the service's zone, built once (the first start, or a changed
 * ENERGY_TIMEZONE), in the background: on a long history it takes minutes, which no start-up probe
 * waits for, and until it commits the days and months are read from the hours (the same answers).
 * A deployment that connects as the read-only role cannot write them: it logs so and goes on
 * reading from the hours until a writer (`pnpm energy seed`, `import`) builds them.
 */
async function buildRollupCalendar(app: FastifyInstance, database: Database<EnergyDatabase>, zone: string) {
  try {
    await buildCalendar(database.pool, zone, (table, seconds) =>
      app.log.info({ table, seconds }, `rollups: the days and months of ${zone} built`),
    )
  } catch (error) {
    if ((error as { code?: string }).code === '42501')
      app.log.warn(`rollups: no right to build the days and months of ${zone}: days and months are read from hours`)
    // a stop or a lost connection mid-build rolls it back: the next start builds again
    else app.log.warn({ err: error }, `rollups: the days and months of ${zone} not built: read from hours`)
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Settles when the rollup calendar's build at start is over, built or not (tests wait for it). */
    rollupCalendar: Promise<void>
  }
}

/**
 * The data API as a Fastify instance, not listening: the capability plugins that decorate the
 * instance, the platform (errors, OpenAPI, health, metrics), the guards, then the route plugins.
 */
export async function buildApp(options: EnergyAppOptions): Promise<FastifyInstance> {
  const settings = options.settings ?? defaultSettings()
  // one zone authority: a zone is taken only when the database can compute in it too
  if (!databaseZonesRegistered()) registerDatabaseZones(await databaseZoneNames(options.database.db))
  if (!isTimeZone(settings.zone)) {
    throw new Error(`ENERGY_TIMEZONE ${JSON.stringify(settings.zone)} is not an IANA time zone name`)
  }
  const app = Fastify(
    serverOptions('energy-data', options.logLevel ?? 'silent', energyErrors, {
      trustedProxies: settings.trustedProxies,
    }),
  ).withTypeProvider<TypeBoxTypeProvider>()

  app.decorate('rollupCalendar', buildRollupCalendar(app, options.database, settings.zone))
  const alerts = createAlertEngine({
    pool: options.database.pool,
    settings: settings.alerts,
    zone: settings.zone,
    now: options.now ?? Date.now,
    log: app.log,
  })
  await app.register(settingsPlugin, { settings, now: options.now ?? Date.now })
  await app.register(databasePlugin, { database: options.database })
  // every answer but /metrics, to the origins configured: callers authenticate by header
  // (x-api-key, or a bearer token), never by cookie, so a page elsewhere gains nothing its caller lacks
  const cors: CorsPolicy = {
    origins: settings.corsOrigins,
    methods: ['GET', 'HEAD'],
    allowedHeaders: ['x-api-key', 'Authorization'],
    exposedHeaders: ['Content-Disposition', 'Retry-After', 'X-Request-Id', 'ETag'],
  }
  // reads from streaming standbys when named: their lag is a metric and bounds readiness
  const replicas =
    settings.readDatabaseUrls.length > 0
      ? openReplicas(options.database.pool, settings.readDatabaseUrls, settings.maxReplicaLagSeconds)
      : undefined
  if (replicas) app.addHook('onClose', async () => replicas.close())
  await registerPlatform(app, {
    service: 'energy-data',
    ...(replicas ? { readiness: { replicas: () => replicas.readiness() } } : {}),
    errors: energyErrors,
    db: options.database.db,
    migrations: readMigrations(energyService.migrationsDir),
    metricsToken: settings.metricsToken,
    metrics: [
      ...alertMetrics(alerts),
      ...(replicas
        ? [
            serviceGauge(
              'energy_replica_lag_seconds',
              'How far the most lagging standby the /data answers are read from is behind the primary (+Inf: one does not answer)',
              () => Math.max(0, ...[...replicas.lags().values()].map((lag) => lag ?? Number.POSITIVE_INFINITY)),
            ),
          ]
        : []),
    ],
    // /metrics is for the operator's scraper, never for a page's script
    cors: (path) => (path === '/metrics' ? undefined : cors),
    frontDoor: { home: '/dashboard', icon: ICON },
    // the original service's routers redirect a path missing its trailing slash (FastAPI)
    redirectSlashes: true,
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
        { name: 'Alerts', description: 'Alert rules, the alerts they raise, their stream' },
        { name: 'Developers', description: 'Calls for development tests' },
      ],
      securitySchemes: securitySchemes(settings.oauth),
      healthTags: ['Developers'],
    },
    ...(settings.oauth?.browserClientId
      ? {
          swaggerOAuth: {
            clientId: settings.oauth.browserClientId,
            issuer: settings.oauth.issuer,
            scopes: [READ_ENERGY],
          },
        }
      : {}),
  })

  // Guards first: every route registered after these two is authenticated and rate limited
  // according to its `config.auth` (see plugins/auth.ts).
  await app.register(authPlugin)
  await app.register(rateLimitPlugin)
  await app.register(exporterPlugin, {
    listenUrl: isEmbedded(options.database) ? undefined : options.database.url,
    replicas,
  })

  await app.register(alertsPlugin, {
    engine: alerts,
    listenUrl: isEmbedded(options.database) ? undefined : options.database.url,
  })

  for (const routes of [
    authRoutes,
    metadataRoutes,
    dataRoutes,
    chartRoutes,
    reportRoutes,
    dashboardRoutes,
    alertRoutes,
    resourceMetadataRoutes,
  ]) {
    await app.register(routes)
  }
  return app
}
