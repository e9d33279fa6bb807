/** OpenID Connect discovery, JWKS and userinfo (GitLab's paths). */
import Type from 'typebox'
import type { ServerContext } from '../context.ts'
import { InsufficientScope } from '../errors.ts'
import { userClaims } from '../openid.ts'
import { authenticate } from '../plugins/api-auth.ts'
import { ApiErrorResponses, ApiSecurity } from './api/schemas.ts'
import { metadata } from './metadata.ts'
import type { OAuthApp } from './types.ts'

export const JWKS_PATH = '/oauth/discovery/keys'
export const USERINFO_PATH = '/oauth/userinfo'

export function openidConfiguration(context: ServerContext) {
  const base = metadata(context)
  const { issuer } = context.settings
  return {
    ...base,
    userinfo_endpoint: `${issuer}${USERINFO_PATH}`,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    claims_supported: [
      'iss',
      'sub',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      'name',
      'nickname',
      'preferred_username',
      'email',
    ],
  }
}

const Jwks = Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) })

const UserInfo = Type.Object({
  sub: Type.String(),
  name: Type.Optional(Type.String()),
  nickname: Type.Optional(Type.String()),
  preferred_username: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
})

export function openidRoutes(app: OAuthApp, context: ServerContext): void {
  app.get(
    '/.well-known/openid-configuration',
    {
      schema: {
        tags: ['OAuth'],
        summary: 'OpenID Connect discovery',
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async () => openidConfiguration(context),
  )

  app.get(
    JWKS_PATH,
    { schema: { tags: ['OAuth'], summary: 'Keys that sign id_tokens (JWKS)', response: { 200: Jwks } } },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300')
      return context.openid.jwks()
    },
  )

  app.get(
    USERINFO_PATH,
    {
      schema: {
        tags: ['OAuth'],
        summary: 'OpenID Connect userinfo (scope openid)',
        security: ApiSecurity,
        response: { 200: UserInfo, ...ApiErrorResponses },
      },
    },
    async (request) => {
      const principal = await authenticate(request, context)
      if (!principal.scopes.includes('openid')) throw new InsufficientScope('openid')
      return { sub: String(principal.user.id), ...userClaims(principal.user, principal.scopes) }
    },
  )
}
