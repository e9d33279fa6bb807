import { CommonConfig, DatabaseUrl, loadConfig, Port } from '@campus/shared'
import Type, { type Static } from 'typebox'
import { energyService } from './service.ts'

export const EnergyConfigSchema = Type.Object({
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
