export { isConflict, retryingConflicts } from './conflicts.ts'
export { createDatabase, type Database, type DatabaseOptions, describeUrl } from './database.ts'
export { locateEmbedded, serviceDataDir } from './embedded-host.ts'
export { type EmbeddedPostgres, startEmbeddedPostgres } from './embedded-server.ts'
export {
  MigrationError,
  type MigrationFile,
  type MigrationResult,
  migrate,
  pendingMigrations,
  readMigrations,
} from './migrator.ts'
export {
  type ChangeListener,
  type ChangeListenerEvents,
  listenForChanges,
  notifyChange,
  type Pool as ListeningPool,
} from './notifications.ts'
export { ensureMigrated, isEmbedded, openServiceDatabase, type ServiceDatabase } from './open.ts'
export { createDatabaseIfMissing } from './provision.ts'
