import { createHash } from 'node:crypto'
import {
  CommonConfig,
  ConfigError,
  DatabaseUrl,
  loadConfig,
  Port,
  parseAddressList,
  TrustedProxies,
} from '@campus/shared'
import Type, { type Static } from 'typebox'
import type { AlertSettings } from './alerts/engine.ts'
import type { IntrospectionSettings } from './auth/introspection.ts'
import { energyService } from './service.ts'

/**
 * How a service of the energy database accepts the OAuth server's access tokens (the data API to
 * read, the ingest service to write): one resource-server client, introspecting them.
 */
export const OAuthResourceConfig = {
  ENERGY_OAUTH_ISSUER: Type.Optional(
    Type.String({
      pattern: '^https?://',
      description:
        'Issuer of the OAuth server whose access tokens the API accepts as `Authorization: Bearer`; unset = API keys only',
    }),
  ),
  ENERGY_OAUTH_URL: Type.Optional(
    Type.String({
      pattern: '^https?://',
      description:
        'Where this service reaches the OAuth server when that is not the issuer URL (a container network); default: the issuer',
    }),
  ),
  ENERGY_OAUTH_CLIENT_ID: Type.String({
    default: 'energy-data',
    minLength: 1,
    description: 'Client id the API introspects tokens with (a resource server registered at the OAuth server)',
  }),
  ENERGY_OAUTH_CLIENT_SECRET: Type.Optional(
    Type.String({ minLength: 1, description: 'Its secret; required with ENERGY_OAUTH_ISSUER' }),
  ),
  ENERGY_OAUTH_BROWSER_CLIENT_ID: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'Client id of a public application at the OAuth server (scope read_energy, redirect URIs PUBLIC/dashboard and PUBLIC/docs/static/oauth2-redirect.html): the dashboard signs people in with it, Swagger UI authorizes with it; unset = no sign-in',
    }),
  ),
  ENERGY_DPOP_NONCE_SECRET: Type.Optional(
    Type.String({
      minLength: 32,
      description:
        'Ask DPoP proofs for a nonce of this service (RFC 9449 9), derived from this secret (instances share it); unset = no nonce',
    }),
  ),
  ENERGY_TOKEN_CACHE_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 300,
    default: 5,
    description:
      'How long an active token is trusted without asking the OAuth server again: a revoked token or a locked account is refused within this bound',
  }),
  ENERGY_TOKEN_STALE_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 3600,
    default: 60,
    description:
      'While the OAuth server cannot be reached, a token found active this recently keeps working (older ones: 503)',
  }),
}

/** Where the services of the energy database keep their rate-limit counters. */
export const SharedCounterConfig = {
  REDIS_URL: Type.Optional(
    Type.String({ pattern: '^rediss?://', description: 'Shared rate-limit counters; unset = per-process memory' }),
  ),
}

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
    default: 24,
    description:
      'Most exports of several slices one process streams at once (each holds about three slices in memory); more: 503',
  }),
  ENERGY_MAX_STREAMS_PER_CREDENTIAL: Type.Integer({
    minimum: 1,
    default: 4,
    description: 'Most of those exports one API key, token holder or address streams at once; more: 429',
  }),
  ENERGY_STREAM_IDLE_SECONDS: Type.Integer({
    minimum: 1,
    default: 30,
    description: 'An export whose client reads nothing for this long is closed, freeing its place',
  }),
  ENERGY_READ_DATABASE_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://[^,]+(,postgres(ql)?://[^,]+)*$',
      description:
        'Streaming standbys of ENERGY_DATABASE_URL (comma-separated) the /data answers are read from, in turn; keys, LISTEN and the rest stay on the primary',
    }),
  ),
  ENERGY_MAX_REPLICA_LAG_SECONDS: Type.Number({
    minimum: 0,
    default: 30,
    description: 'A standby further behind the primary than this (or not answering) makes /health/ready answer 503',
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
  ENERGY_RATE_LIMIT_FAILED_AUTH: Type.Integer({
    minimum: 1,
    default: 30,
    description:
      'Failed authentications (unknown, expired or revoked keys and tokens) per minute and client address; past it, 429 before any check',
  }),
  ENERGY_RATE_LIMIT_PREFIX: Type.String({
    default: 'energy-rl:',
    minLength: 1,
    description: 'Prefix of the rate-limit counters in Redis (instances sharing counters use the same one)',
  }),
  ...OAuthResourceConfig,
  ENERGY_CORS_ORIGINS: Type.Refine(
    Type.String({
      default: '*',
      description:
        'Origins whose scripts may read the answers (CORS, never with credentials): `*` for any, or origins ' +
        'separated by commas (https://grafana.example.org, http://127.0.0.1:8080)',
    }),
    (value) => value.trim() === '*' || parseOrigins(value).every(isOrigin),
    () => '`*` or origins such as https://grafana.example.org separated by commas',
  ),
  ...SharedCounterConfig,
  ENERGY_TRUSTED_PROXIES: TrustedProxies(),
  ALERT_EVALUATION_SECONDS: Type.Number({
    minimum: 0.1,
    maximum: 3600,
    default: 5,
    description: 'Seconds between two evaluations of the alert rules (each commit of the write path evaluates too)',
  }),
  ALERTMANAGER_URL: Type.Optional(
    Type.String({ format: 'uri', description: 'Prometheus Alertmanager the alerts are sent to (POST /api/v2/alerts)' }),
  ),
  ALERTMANAGER_RESEND_SECONDS: Type.Integer({
    minimum: 1,
    default: 60,
    description: 'Seconds between two sends of a firing alert to Alertmanager',
  }),
  ALERT_WEBHOOK_URL: Type.Optional(
    Type.String({
      format: 'uri',
      description: "A webhook each alert's firing and resolving is posted to (Alertmanager's format)",
    }),
  ),
  ALERT_WEBHOOK_SECRET: Type.Optional(
    Type.String({
      minLength: 16,
      description: 'Key of the HMAC-SHA256 signature of webhook bodies (required with ALERT_WEBHOOK_URL)',
    }),
  ),
  ALERT_HISTORY_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    default: 90,
    description: 'Days a resolved alert (and its webhook notifications) is kept in the history',
  }),
  ALERT_EXTERNAL_URL: Type.String({
    default: 'http://127.0.0.1:8000',
    description: "This service's URL as the receivers of alerts should see it (their links back)",
  }),
})

function parseOrigins(value: string): string[] {
  return value.split(/[\s,]+/).filter(Boolean)
}

/** `scheme://host[:port]` exactly, as a browser writes the Origin header. */
function isOrigin(text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text
  } catch {
    return false
  }
}

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
  /** Most of them one credential or address holds. */
  maxStreamsPerCredential: number
  /** Seconds an export may wait on a client that reads nothing. */
  streamIdleSeconds: number
  /** Most bytes of /data answers of past windows kept in memory (ENERGY_CACHE_MB); 0 = no cache. */
  cacheBytes: number
  /** Standbys the /data answers are read from (ENERGY_READ_DATABASE_URL); none: the primary. */
  readDatabaseUrls: string[]
  /** A standby lagging more than this makes the instance not ready. */
  maxReplicaLagSeconds: number
  /** The public views need a key too. */
  requireKeyEverywhere: boolean
  /** Requests per minute and client address on public routes, and per API key. */
  rateLimitPublic: number
  rateLimitKey: number
  /** Failed authentications per minute and client address. */
  rateLimitFailedAuth: number
  /** Prefix of the rate-limit counters in Redis. */
  rateLimitPrefix: string
  /** Rate-limit counters shared by every instance; per-process memory without it. */
  redisUrl?: string | undefined
  /** Bearer token /metrics requires; unset, only this machine may read them. */
  metricsToken?: string | undefined
  /** The OAuth server whose access tokens are accepted; unset, API keys only. */
  oauth?: IntrospectionSettings | undefined
  /** Origins whose scripts may read the answers (ENERGY_CORS_ORIGINS): any, or these. */
  corsOrigins: '*' | string[]
  /** Reverse proxies whose X-Forwarded-For names the client (ENERGY_TRUSTED_PROXIES). */
  trustedProxies: string[]
  /** Evaluation and delivery of alerts (ALERT_*, ALERTMANAGER_*). */
  alerts: AlertSettings
}

export function settingsFromConfig(config: EnergyConfig): EnergySettings {
  return {
    zone: config.ENERGY_TIMEZONE,
    maxRows: config.ENERGY_MAX_ROWS,
    maxStreams: config.ENERGY_MAX_STREAMS,
    maxStreamsPerCredential: config.ENERGY_MAX_STREAMS_PER_CREDENTIAL,
    streamIdleSeconds: config.ENERGY_STREAM_IDLE_SECONDS,
    cacheBytes: Math.floor(config.ENERGY_CACHE_MB * 1024 * 1024),
    readDatabaseUrls: config.ENERGY_READ_DATABASE_URL?.split(',') ?? [],
    maxReplicaLagSeconds: config.ENERGY_MAX_REPLICA_LAG_SECONDS,
    requireKeyEverywhere: config.ENERGY_REQUIRE_KEY_EVERYWHERE,
    rateLimitPublic: config.ENERGY_RATE_LIMIT_PUBLIC,
    rateLimitKey: config.ENERGY_RATE_LIMIT_KEY,
    rateLimitFailedAuth: config.ENERGY_RATE_LIMIT_FAILED_AUTH,
    rateLimitPrefix: config.ENERGY_RATE_LIMIT_PREFIX,
    redisUrl: config.REDIS_URL,
    metricsToken: config.METRICS_TOKEN,
    corsOrigins: config.ENERGY_CORS_ORIGINS.trim() === '*' ? '*' : parseOrigins(config.ENERGY_CORS_ORIGINS),
    oauth: oauthSettings(config),
    trustedProxies: parseAddressList(config.ENERGY_TRUSTED_PROXIES),
    alerts: alertSettings(config),
  }
}

function alertSettings(config: EnergyConfig): AlertSettings {
  const url = config.ALERT_WEBHOOK_URL
  const secret = config.ALERT_WEBHOOK_SECRET
  if (url !== undefined && secret === undefined)
    throw new ConfigError('Invalid configuration: ALERT_WEBHOOK_SECRET is required with ALERT_WEBHOOK_URL')
  return {
    evaluationMs: Math.round(config.ALERT_EVALUATION_SECONDS * 1000),
    alertmanagerUrl: config.ALERTMANAGER_URL,
    resendMs: config.ALERTMANAGER_RESEND_SECONDS * 1000,
    webhook: url !== undefined && secret !== undefined ? { url, secret } : undefined,
    externalUrl: config.ALERT_EXTERNAL_URL.replace(/\/+$/, ''),
    historyRetentionMs: config.ALERT_HISTORY_RETENTION_DAYS * 86_400_000,
  }
}

type OAuthResourceValues = Static<ReturnType<typeof Type.Object<typeof OAuthResourceConfig>>>

/** The introspection settings the configuration names; none without ENERGY_OAUTH_ISSUER. */
export function oauthSettings(config: OAuthResourceValues): IntrospectionSettings | undefined {
  const issuer = config.ENERGY_OAUTH_ISSUER
  if (issuer === undefined) return undefined
  const clientSecret = config.ENERGY_OAUTH_CLIENT_SECRET
  if (clientSecret === undefined)
    throw new ConfigError('Invalid configuration: ENERGY_OAUTH_CLIENT_SECRET is required with ENERGY_OAUTH_ISSUER')
  return {
    issuer: issuer.replace(/\/+$/, ''),
    ...(config.ENERGY_OAUTH_URL ? { reachAt: config.ENERGY_OAUTH_URL.replace(/\/+$/, '') } : {}),
    clientId: config.ENERGY_OAUTH_CLIENT_ID,
    clientSecret,
    ...(config.ENERGY_OAUTH_BROWSER_CLIENT_ID ? { browserClientId: config.ENERGY_OAUTH_BROWSER_CLIENT_ID } : {}),
    cacheSeconds: config.ENERGY_TOKEN_CACHE_SECONDS,
    staleSeconds: config.ENERGY_TOKEN_STALE_SECONDS,
    ...(config.ENERGY_DPOP_NONCE_SECRET
      ? { dpopNonceKey: createHash('sha256').update(config.ENERGY_DPOP_NONCE_SECRET).digest() }
      : {}),
  }
}

/** The settings of an empty environment (every variable at its default): what tests and benchmarks start from. */
export function defaultSettings(overrides: Partial<EnergySettings> = {}): EnergySettings {
  return { ...settingsFromConfig(loadEnergyConfig({})), ...overrides }
}
