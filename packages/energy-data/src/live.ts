/**
 * What the ingest service (packages/ingest) takes from the data API's package, which owns the
 * energy database and its one write path: the catalogue of meters and units, the write of a batch
 * of live messages, the API keys that may write, the estate's model for simulated dataloggers.
 */

export {
  accessTokenOf,
  authenticate,
  authenticateBearer,
  failedAuthentications,
  resourceProofs,
  unauthorized,
} from './auth/credentials.ts'
export { TokenIntrospector } from './auth/introspection.ts'
export { METERS } from './catalogue/meters.ts'
export { KINDS, SENML_UNIT_OF } from './catalogue/quantities.ts'
export { OAuthResourceConfig, oauthSettings, SharedCounterConfig } from './config.ts'
export type { EnergyDatabase } from './db/schema.ts'
export { WRITE_ENERGY, WRITE_PATH_PREFIX, writeAllowed } from './domain/api-keys.ts'
export {
  type BrokerUser,
  clientIdAllowed,
  DATALOGGER_OF_TOPIC,
  generateBrokerPassword,
  hashBrokerPassword,
  mayPublish,
  maySubscribe,
  senmlTopic,
  senmlTopics,
  TOPIC_ROOT,
  verifyBrokerPassword,
} from './domain/broker-access.ts'
export type { IntakeLimits, LiveMessage, RefusalCode, ResolvedMessage } from './domain/intake.ts'
export { DEFAULT_INTAKE_LIMITS, REFUSAL_CODES, resolveMessage } from './domain/intake.ts'
export { METER_NAME_BASE, meterName } from './domain/senml.ts'
export { QUARTER_MS } from './domain/time.ts'
export { DetailError, energyErrors } from './errors.ts'
export { createApiKey, findApiKeyByDigest, touchApiKey } from './repositories/api-keys.ts'
export { findBrokerCredential, issueBrokerCredential } from './repositories/broker-credentials.ts'
export { registerReadings } from './repositories/meter-latest.ts'
export { purgeQuarantine } from './repositories/quarantine.ts'
export { quarantineRefusals } from './repositories/quarantine-writes.ts'
export { buildCalendar } from './repositories/rollups.ts'
export { dropSamplePartitionsBefore, prepareSamplePartitions } from './repositories/sample-partitions.ts'
export { type BatchResult, type MessageResult, takeMessages } from './repositories/sample-writes.ts'
export { inTransaction } from './repositories/transaction.ts'
export { RateLimitedResponse } from './schemas/errors.ts'
export { environmentAt } from './seed/environment.ts'
export { DATALOGGERS, meterSignal, signalsAt } from './seed/estate.ts'
export { seedEstate } from './seed/seed.ts'
export { energyService } from './service.ts'
