import {
  createDatabaseIfMissing,
  type MigrationResult,
  migrate,
  openServiceDatabase,
  readMigrations,
  type ServiceDatabase,
  type ServiceDescriptor,
  serviceEndpoints,
} from '@campus/shared'

/**
 * Opens a service's database as the stack's configuration names it (creating it on a PostgreSQL
 * server where it is missing and the role may), and applies its pending migrations.
 */
export async function openAndMigrate(
  descriptor: ServiceDescriptor,
  config: { DATA_DIR: string },
): Promise<{ database: ServiceDatabase<unknown>; result: MigrationResult & { created?: true } }> {
  const url = serviceEndpoints(descriptor, config).databaseUrl
  const created = url ? await createDatabaseIfMissing(url) : false
  const database = await openServiceDatabase({ service: descriptor.name, url, dataDir: config.DATA_DIR })
  try {
    const result = await migrate(database.db, readMigrations(descriptor.migrationsDir))
    return { database, result: created ? { created, ...result } : result }
  } catch (error) {
    await database.close()
    throw error
  }
}
