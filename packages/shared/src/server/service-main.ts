import type { FastifyInstance } from 'fastify'
import { ensureMigrated, openServiceDatabase, type ServiceDatabase } from '../db/open.ts'
import type { ServiceDescriptor } from '../service/descriptor.ts'
import { listenUntilSignalled } from './run.ts'

export interface ServiceRuntimeConfig {
  HOST: string
  DATA_DIR: string
  MIGRATE_ON_START?: boolean | undefined
}

/** The port and database URL of a service, read from its configuration under the names its descriptor gives. */
export function serviceEndpoints(
  descriptor: ServiceDescriptor,
  config: object,
): { port: number; databaseUrl: string | undefined } {
  const values = config as Record<string, unknown>
  const port = values[descriptor.portEnv]
  const databaseUrl = values[descriptor.databaseUrlEnv]
  return {
    port: typeof port === 'number' ? port : descriptor.defaultPort,
    databaseUrl: typeof databaseUrl === 'string' ? databaseUrl : undefined,
  }
}

/** A service's database as its configuration names it, checked for pending migrations (applied when allowed). */
export async function openMigratedDatabase<DB>(
  descriptor: ServiceDescriptor,
  config: ServiceRuntimeConfig,
): Promise<ServiceDatabase<DB>> {
  const database = await openServiceDatabase<DB>({
    service: descriptor.name,
    url: serviceEndpoints(descriptor, config).databaseUrl,
    dataDir: config.DATA_DIR,
  })
  try {
    await ensureMigrated(database, descriptor.migrationsDir, config.MIGRATE_ON_START)
    return database
  } catch (error) {
    await database.close()
    throw error
  }
}

/**
 * The common start of a service process: open its database, check or apply migrations,
 * build the app, listen until signalled. Refuses a database with pending migrations unless
 * told to migrate (the embedded database is migrated by default).
 */
export async function startService<DB>(options: {
  descriptor: ServiceDescriptor
  config: ServiceRuntimeConfig
  build: (database: ServiceDatabase<DB>) => Promise<FastifyInstance>
}): Promise<void> {
  const { descriptor, config } = options
  const database = await openMigratedDatabase<DB>(descriptor, config)
  try {
    const app = await options.build(database)
    app.addHook('onClose', async () => database.close())
    app.log.info({ database: database.description }, `${descriptor.title} starting`)
    await listenUntilSignalled(app, { port: serviceEndpoints(descriptor, config).port, host: config.HOST })
  } catch (error) {
    await database.close()
    throw error
  }
}
