import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CommonConfig, DatabaseUrl, loadConfig, Port, parseAddressList, TrustedProxies } from '@campus/shared'
import Type, { type Static } from 'typebox'
import type { RegistrationMode } from './domain/client-metadata.ts'
import { oauthService } from './service.ts'

export const OAuthConfigSchema = Type.Object({
  ...CommonConfig,
  OAUTH_PORT: Port(oauthService.defaultPort),
  OAUTH_DATABASE_URL: DatabaseUrl(),
  OAUTH_ISSUER: Type.Optional(
    Type.String({
      pattern: '^https?://[^/?#]+(/[^?#]*)?$',
      description: 'Issuer identifier and base of absolute URLs',
    }),
  ),
  OAUTH_IMPLICIT_GRANT: Type.Boolean({
    default: true,
    description: 'Offer response_type=token (legacy implicit flow; tokens travel in the browser)',
  }),
  OAUTH_PASSWORD_GRANT: Type.Boolean({
    default: true,
    description: 'Offer grant_type=password (legacy; the client sees the password)',
  }),
  OAUTH_SIGNUP_ENABLED: Type.Boolean({
    default: false,
    description: 'Let visitors create their own account at /users/sign_up',
  }),
  OAUTH_PKCE_PLAIN: Type.Boolean({ default: false, description: 'Accept code_challenge_method=plain' }),
  OAUTH_SECRET_KEY: Type.Optional(
    Type.String({
      minLength: 32,
      description: 'Seals TOTP secrets at rest; unset = a key file DATA_DIR/oauth-secret.key made on first use',
    }),
  ),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://', description: 'Throttling counters; unset = memory' })),
  OAUTH_CACHE_SYNC: Type.Boolean({
    default: false,
    description:
      'Before using a cached lookup, make sure every change committed elsewhere has been heard (one shared round trip); exact across instances, slower',
  }),
  OAUTH_REDIS_PREFIX: Type.String({
    default: 'oauth:',
    pattern: '^[A-Za-z0-9:_.-]{0,64}$',
    description: 'Prefix of the Redis keys (several deployments may share one Redis)',
  }),
  OAUTH_TRUSTED_PROXIES: TrustedProxies(),
  OAUTH_THROTTLE_ACCOUNT_LIMIT: Type.Integer({ minimum: 1, default: 10, description: 'Failed sign-ins per account' }),
  OAUTH_THROTTLE_IP_LIMIT: Type.Integer({ minimum: 1, default: 50, description: 'Failed sign-ins per client IP' }),
  OAUTH_THROTTLE_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 900, description: 'Throttling window' }),
  OAUTH_THROTTLE_ANONYMOUS_LIMIT: Type.Integer({
    minimum: 1,
    default: 600,
    description:
      'Requests per client IP and window that make state for a caller nobody knows yet (a sign-in or sign-up page that opens a session, a device authorization)',
  }),
  OAUTH_TOKEN_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    default: 30,
    description:
      'Days an ended token is kept before it is purged: access tokens expired or revoked (with their refresh tokens once those are revoked or rotated), personal access tokens revoked or past their expiry date',
  }),
  OAUTH_REGISTRATION: Type.Union([Type.Literal('off'), Type.Literal('token'), Type.Literal('open')], {
    default: 'off',
    description:
      'Dynamic client registration at /oauth/register (RFC 7591): off; token (an initial access token an administrator issues with pnpm oauth registration-token:create); open (anyone may register a public client, rate limited, never a powerful scope; initial access tokens still allow more)',
  }),
  OAUTH_THROTTLE_REGISTRATION_LIMIT: Type.Integer({
    minimum: 1,
    default: 20,
    description: 'Open registrations per client IP and throttling window',
  }),
  OAUTH_REQUIRE_PAR: Type.Boolean({
    default: false,
    description:
      'Every application must push its authorization requests to /oauth/par (RFC 9126 5); without it, per application',
  }),
  OAUTH_DPOP_NONCE: Type.Boolean({
    default: false,
    description:
      'Ask DPoP proofs for a server nonce (RFC 9449 8 and 9): a client first gets use_dpop_nonce and the nonce in DPoP-Nonce; instances derive it from OAUTH_SECRET_KEY',
  }),
  OAUTH_AUDIT_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    default: 365,
    description: 'Days an audit event is kept before the sweep purges it',
  }),
  OAUTH_TOKEN_CACHE_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 60,
    default: 2,
    description:
      'How long an instance may reuse a token or client lookup (0 = never; never on the embedded database); changes made by any instance clear it at once (LISTEN/NOTIFY)',
  }),
})

export type OAuthConfig = Static<typeof OAuthConfigSchema>

export const loadOAuthConfig = (env: NodeJS.ProcessEnv = process.env): OAuthConfig => loadConfig(OAuthConfigSchema, env)

/** What the running server needs to know, resolved from the configuration. */
export interface OAuthSettings {
  /** Issuer identifier (RFC 8414 / RFC 9207) and base of every absolute URL. */
  issuer: string
  implicitGrant: boolean
  passwordGrant: boolean
  pkcePlain: boolean
  /** visitors may create accounts at /users/sign_up */
  signupEnabled: boolean
  throttle: {
    accountLimit: number
    ipLimit: number
    windowSeconds: number
    anonymousLimit?: number
    registrationLimit?: number
  }
  /** Dynamic client registration (RFC 7591): off, by initial access token, or open. */
  registration?: RegistrationMode
  /** Reverse proxies whose X-Forwarded-For names the client (addresses or CIDR ranges). */
  trustedProxies: string[]
  redisUrl?: string | undefined
  redisPrefix?: string
  tokenCacheSeconds: number
  /** Days an ended token is kept before the sweep purges it. */
  tokenRetentionDays: number
  /** Days an audit event is kept before the sweep purges it. */
  auditRetentionDays?: number
  /** Check the invalidation channel before trusting a cache hit (see cache-invalidation.ts). */
  cacheSync?: boolean
  /** 32-byte key sealing secrets the server must read back (TOTP seeds). */
  secretKey: Buffer
  /** Bearer token /metrics requires; unset, only this machine may read them. */
  metricsToken?: string | undefined
  /** Every authorization request must be pushed first (RFC 9126 5). */
  requirePushedRequests?: boolean
  /** DPoP proofs must carry a server nonce. */
  dpopNonce?: boolean
}

/** Served over https (behind a TLS-terminating proxy, as a real deployment is): Secure cookies, HSTS. */
export const isHttpsIssuer = (settings: Pick<OAuthSettings, 'issuer'>): boolean => settings.issuer.startsWith('https:')

/** The settings of a configuration; the sealing key as `loadSecretKey` finds it, unless given. */
export function settingsFromConfig(config: OAuthConfig, secretKey: Buffer = loadSecretKey(config)): OAuthSettings {
  return {
    issuer: (config.OAUTH_ISSUER ?? `http://${config.HOST}:${config.OAUTH_PORT}`).replace(/\/$/, ''),
    implicitGrant: config.OAUTH_IMPLICIT_GRANT,
    passwordGrant: config.OAUTH_PASSWORD_GRANT,
    pkcePlain: config.OAUTH_PKCE_PLAIN,
    signupEnabled: config.OAUTH_SIGNUP_ENABLED,
    throttle: {
      accountLimit: config.OAUTH_THROTTLE_ACCOUNT_LIMIT,
      ipLimit: config.OAUTH_THROTTLE_IP_LIMIT,
      windowSeconds: config.OAUTH_THROTTLE_WINDOW_SECONDS,
      anonymousLimit: config.OAUTH_THROTTLE_ANONYMOUS_LIMIT,
      registrationLimit: config.OAUTH_THROTTLE_REGISTRATION_LIMIT,
    },
    registration: config.OAUTH_REGISTRATION,
    trustedProxies: parseAddressList(config.OAUTH_TRUSTED_PROXIES),
    redisUrl: config.REDIS_URL,
    redisPrefix: config.OAUTH_REDIS_PREFIX,
    tokenCacheSeconds: config.OAUTH_TOKEN_CACHE_SECONDS,
    tokenRetentionDays: config.OAUTH_TOKEN_RETENTION_DAYS,
    auditRetentionDays: config.OAUTH_AUDIT_RETENTION_DAYS,
    cacheSync: config.OAUTH_CACHE_SYNC,
    secretKey,
    metricsToken: config.METRICS_TOKEN,
    dpopNonce: config.OAUTH_DPOP_NONCE,
    requirePushedRequests: config.OAUTH_REQUIRE_PAR,
  }
}

/**
 * The settings of an empty environment (every variable at its default, an issuer on the default
 * port) with a fresh random sealing key and no key file: what tests and benchmarks start from.
 */
export function defaultSettings(overrides: Partial<OAuthSettings> = {}): OAuthSettings {
  return { ...settingsFromConfig(loadOAuthConfig({}), randomBytes(32)), ...overrides }
}

/**
 * The sealing key: from OAUTH_SECRET_KEY (any string of 32+ characters, hashed to 32 bytes), or
 * a random key kept in DATA_DIR/oauth-secret.key (created once, mode 0600) so the embedded
 * setup and its command line share it. Several instances must share OAUTH_SECRET_KEY.
 */
export function loadSecretKey(config: Pick<OAuthConfig, 'OAUTH_SECRET_KEY' | 'DATA_DIR'>): Buffer {
  if (config.OAUTH_SECRET_KEY) return createHash('sha256').update(config.OAUTH_SECRET_KEY).digest()
  const file = join(config.DATA_DIR, 'oauth-secret.key')
  if (!existsSync(file)) {
    mkdirSync(config.DATA_DIR, { recursive: true })
    writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' })
    chmodSync(file, 0o600)
  }
  return createHash('sha256').update(readFileSync(file, 'utf8').trim()).digest()
}
