import {
  type MigrationResult,
  migrate,
  openServiceDatabase,
  readMigrations,
  type ServiceDatabase,
  type ServiceDescriptor,
  serviceEndpoints,
} from '@campus/shared'

/** Opens a service's database as the stack's configuration names it, and applies its pending migrations. */
export async function openAndMigrate(
  descriptor: ServiceDescriptor,
  config: { DATA_DIR: string },
): Promise<{ database: ServiceDatabase<unknown>; result: MigrationResult }> {
  const database = await openServiceDatabase({
    service: descriptor.name,
    url: serviceEndpoints(descriptor, config).databaseUrl,
    dataDir: config.DATA_DIR,
  })
  try {
    return { database, result: await migrate(database.db, readMigrations(descriptor.migrationsDir)) }
  } catch (error) {
    await database.close()
    throw error
  }
}
