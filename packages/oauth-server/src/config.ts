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
})

export type OAuthConfig = Static<typeof OAuthConfigSchema>

export const loadOAuthConfig = (env: NodeJS.ProcessEnv = process.env): OAuthConfig => loadConfig(OAuthConfigSchema, env)
