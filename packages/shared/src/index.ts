export {
  AddressList,
  CommonConfig,
  ConfigError,
  DatabaseUrl,
  loadConfig,
  Port,
  parseAddressList,
  runMain,
} from './config.ts'
export * from './db/index.ts'
export { type ErrorFormat, HttpError, type ValidationIssue } from './errors.ts'
export { HealthCheck } from './server/health.ts'
export { redactUrl, serverOptions } from './server/logging.ts'
export { type PlatformOptions, registerPlatform } from './server/platform.ts'
export { listenUntilSignalled } from './server/run.ts'
export { type ServiceRuntimeConfig, startService } from './server/service-main.ts'
export { repoRoot, type ServiceDescriptor, service, services } from './stack/services.ts'
