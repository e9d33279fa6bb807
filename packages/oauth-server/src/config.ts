import { CommonConfig, DatabaseUrl, loadConfig, Port } from '@campus/shared'
import Type, { type Static } from 'typebox'

export const OAuthConfigSchema = Type.Object({
  ...CommonConfig,
  OAUTH_PORT: Port(3000),
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
  OAUTH_PKCE_PLAIN: Type.Boolean({ default: false, description: 'Accept code_challenge_method=plain' }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://', description: 'Throttling counters; unset = memory' })),
  OAUTH_THROTTLE_ACCOUNT_LIMIT: Type.Integer({ minimum: 1, default: 10, description: 'Failed sign-ins per account' }),
  OAUTH_THROTTLE_IP_LIMIT: Type.Integer({ minimum: 1, default: 50, description: 'Failed sign-ins per client IP' }),
  OAUTH_THROTTLE_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 900, description: 'Throttling window' }),
  OAUTH_TOKEN_CACHE_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 60,
    default: 2,
    description:
      'How long an instance may reuse an access-token lookup (0 = never); bounds how late another instance sees a revocation',
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
  throttle: { accountLimit: number; ipLimit: number; windowSeconds: number }
  redisUrl?: string | undefined
  tokenCacheSeconds: number
}

export function settingsFromConfig(config: OAuthConfig): OAuthSettings {
  return {
    issuer: (config.OAUTH_ISSUER ?? `http://${config.HOST}:${config.OAUTH_PORT}`).replace(/\/$/, ''),
    implicitGrant: config.OAUTH_IMPLICIT_GRANT,
    passwordGrant: config.OAUTH_PASSWORD_GRANT,
    pkcePlain: config.OAUTH_PKCE_PLAIN,
    throttle: {
      accountLimit: config.OAUTH_THROTTLE_ACCOUNT_LIMIT,
      ipLimit: config.OAUTH_THROTTLE_IP_LIMIT,
      windowSeconds: config.OAUTH_THROTTLE_WINDOW_SECONDS,
    },
    redisUrl: config.REDIS_URL,
    tokenCacheSeconds: config.OAUTH_TOKEN_CACHE_SECONDS,
  }
}

export function defaultSettings(overrides: Partial<OAuthSettings> = {}): OAuthSettings {
  return {
    issuer: 'http://127.0.0.1:3000',
    implicitGrant: true,
    passwordGrant: true,
    pkcePlain: false,
    throttle: { accountLimit: 10, ipLimit: 50, windowSeconds: 900 },
    tokenCacheSeconds: 2,
    ...overrides,
  }
}
