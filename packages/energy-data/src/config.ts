import { CommonConfig, DatabaseUrl, loadConfig, Port } from '@campus/shared'
import Type, { type Static } from 'typebox'
import { energyService } from './service.ts'

const EnergyConfigSchema = Type.Object({
  ...CommonConfig,
  ENERGY_PORT: Port(energyService.defaultPort),
  ENERGY_DATABASE_URL: DatabaseUrl(),
  ENERGY_TIMEZONE: Type.String({
    default: 'Europe/Rome',
    minLength: 1,
    description: 'IANA zone of local days: buckets of a day or longer start at local midnight there',
  }),
  ENERGY_MAX_ROWS: Type.Integer({ minimum: 1, default: 500_000, description: 'Most rows one data request may return' }),
  ENERGY_MAX_STREAMS: Type.Integer({
    minimum: 1,
    default: 32,
    description:
      'Most exports of several slices one process streams at once (each holds about two slices in memory); more: 503',
  }),
  ENERGY_CACHE_MB: Type.Number({
    minimum: 0,
    default: 32,
    description:
      'Megabytes of /data answers for windows wholly in the past kept per process (dropped on every instance when an import or seed writes their window); 0 = off',
  }),
  ENERGY_REQUIRE_KEY_EVERYWHERE: Type.Boolean({
    default: false,
    description: 'Require an API key on the public endpoints too (charts, reports, /auth/public, ...)',
  }),
  ENERGY_RATE_LIMIT_PUBLIC: Type.Integer({
    minimum: 1,
    default: 120,
    description: 'Requests per minute and client address on public endpoints',
  }),
  ENERGY_RATE_LIMIT_KEY: Type.Integer({ minimum: 1, default: 600, description: 'Requests per minute and API key' }),
  ENERGY_RATE_LIMIT_PREFIX: Type.String({
    default: 'energy-rl:',
    minLength: 1,
    description: 'Prefix of the rate-limit counters in Redis (instances sharing counters use the same one)',
  }),
  REDIS_URL: Type.Optional(
    Type.String({ pattern: '^rediss?://', description: 'Shared rate-limit counters; unset = per-process memory' }),
  ),
})

export type EnergyConfig = Static<typeof EnergyConfigSchema>

export const loadEnergyConfig = (env: NodeJS.ProcessEnv = process.env): EnergyConfig =>
  loadConfig(EnergyConfigSchema, env)

/** What the running service needs to know, resolved from the configuration. */
export interface EnergySettings {
  /** IANA zone of local days, hours and printed offsets (ENERGY_TIMEZONE). */
  zone: string
  /** Most rows one data request may return. */
  maxRows: number
  /** Most multi-slice exports streamed at once by this process. */
  maxStreams: number
  /** Most bytes of /data answers of past windows kept in memory (ENERGY_CACHE_MB); 0 = no cache. */
  cacheBytes: number
  /** The public views need a key too. */
  requireKeyEverywhere: boolean
  /** Requests per minute and client address on public routes, and per API key. */
  rateLimitPublic: number
  rateLimitKey: number
  /** Prefix of the rate-limit counters in Redis. */
  rateLimitPrefix: string
  /** Rate-limit counters shared by every instance; per-process memory without it. */
  redisUrl?: string | undefined
  /** Bearer token /metrics requires; unset, only this machine may read them. */
  metricsToken?: string | undefined
}

export function settingsFromConfig(config: EnergyConfig): EnergySettings {
  return {
    zone: config.ENERGY_TIMEZONE,
    maxRows: config.ENERGY_MAX_ROWS,
    maxStreams: config.ENERGY_MAX_STREAMS,
    cacheBytes: Math.floor(config.ENERGY_CACHE_MB * 1024 * 1024),
    requireKeyEverywhere: config.ENERGY_REQUIRE_KEY_EVERYWHERE,
    rateLimitPublic: config.ENERGY_RATE_LIMIT_PUBLIC,
    rateLimitKey: config.ENERGY_RATE_LIMIT_KEY,
    rateLimitPrefix: config.ENERGY_RATE_LIMIT_PREFIX,
    redisUrl: config.REDIS_URL,
    metricsToken: config.METRICS_TOKEN,
  }
}

/** The settings of an empty environment (every variable at its default): what tests and benchmarks start from. */
export function defaultSettings(overrides: Partial<EnergySettings> = {}): EnergySettings {
  return { ...settingsFromConfig(loadEnergyConfig({})), ...overrides }
}
