export {
  asksForHelp,
  type Command,
  CommandError,
  commandFailed,
  EXIT_FAILURE,
  EXIT_USAGE,
  exitAfterOutput,
  parseFlags,
  programAsTyped,
  requiredFlag,
  runCommandLine,
  usageError,
} from './cli/commands.ts'
export { readSecret, secretFlags } from './cli/secret.ts'
export {
  AddressList,
  CommonConfig,
  ConfigError,
  DatabaseUrl,
  loadConfig,
  Port,
  parseAddressList,
  runMain,
  TrustedProxies,
} from './config.ts'
export * from './db/index.ts'
export {
  accessTokenHash,
  bindingRefusal,
  DPOP_ALGORITHMS,
  DPOP_IAT_WINDOW_SECONDS,
  type DpopErrorCode,
  type DpopOptions,
  DpopProofError,
  type DpopProofs,
  dpopChallenge,
  dpopProofs,
  type ProofContext,
} from './dpop/proof.ts'
export { type ErrorFormat, HttpError, type ValidationIssue } from './errors.ts'
export {
  type AttemptCounter,
  createAttemptCounter,
  type Limited,
  memoryAttempts,
  redisAttempts,
} from './limits/attempts.ts'
export { createOnceStore, memoryOnce, type OnceStore, redisOnce } from './limits/once.ts'
export { routePlugins, type ServiceApp } from './server/composition.ts'
export { addVary, type CorsPolicies, type CorsPolicy, pathOf } from './server/cors.ts'
export { FAVICON_PATH, type FrontDoor } from './server/front-door.ts'
export { HealthCheck, type ReadinessCheck } from './server/health.ts'
export { redactUrl, serverOptions } from './server/logging.ts'
export { JSON_UTF8 } from './server/media-types.ts'
export { serviceCounter, serviceGauge, serviceLabelledGauge } from './server/metrics.ts'
export { type PlatformOptions, registerPlatform } from './server/platform.ts'
export {
  announceResourceMetadata,
  PROTECTED_RESOURCE_PATH,
  ProtectedResourceMetadata,
  protectedResourceMetadata,
} from './server/protected-resource.ts'
export { listenUntilSignalled } from './server/run.ts'
export {
  openMigratedDatabase,
  type ServiceRuntimeConfig,
  serviceEndpoints,
  startService,
} from './server/service-main.ts'
export type { ParameterRule } from './server/validation.ts'
export type { ServiceDescriptor } from './service/descriptor.ts'
export {
  type CommandResult,
  freePort,
  type LaunchOptions,
  launchService,
  type RunningService,
  runServiceCommand,
  type ServiceProcess,
  type SpawnOptions,
  spawnService,
} from './service/launch.ts'
export {
  announceStack,
  liveProcess,
  runningStack,
  type StackAnnouncement,
  serviceUrl,
  stackFile,
} from './service/running-stack.ts'
