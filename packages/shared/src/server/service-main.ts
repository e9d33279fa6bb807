import type { FastifyInstance } from 'fastify'
import { ensureMigrated, openServiceDatabase, type ServiceDatabase } from '../db/open.ts'
import type { ServiceDescriptor } from '../stack/services.ts'
import { listenUntilSignalled } from './run.ts'

export interface ServiceRuntimeConfig {
  HOST: string
  DATA_DIR: string
  MIGRATE_ON_START?: boolean | undefined
}

/**
 * The common start of a service process: open its database, check or apply migrations,
 * build the app, listen until signalled. Refuses a database with pending migrations unless
 * told to migrate (the embedded database is migrated by default).
 */
export async function startService<DB>(options: {
  descriptor: ServiceDescriptor
  config: ServiceRuntimeConfig
  port: number
  databaseUrl: string | undefined
  build: (database: ServiceDatabase<DB>) => Promise<FastifyInstance>
}): Promise<void> {
  const { descriptor, config } = options
  const database = await openServiceDatabase<DB>({
    service: descriptor.name,
    url: options.databaseUrl,
    dataDir: config.DATA_DIR,
  })
  try {
    await ensureMigrated(database as ServiceDatabase<unknown>, descriptor.migrationsDir, config.MIGRATE_ON_START)
    const app = await options.build(database)
    app.addHook('onClose', async () => database.close())
    app.log.info({ database: database.description }, `${descriptor.title} starting`)
    await listenUntilSignalled(app, { port: options.port, host: config.HOST })
  } catch (error) {
    await database.close()
    throw error
  }
}
