/** OpenID Connect discovery, JWKS and userinfo (GitLab's paths). */
import Type from 'typebox'
import { withPrincipal } from '../api-auth.ts'
import { JWKS_PATH, openidConfiguration, USERINFO_PATH } from '../discovery.ts'
import { InsufficientScope } from '../errors.ts'
import { routePlugin } from '../oauth-app.ts'
import { userClaims } from '../openid.ts'
import { ApiErrorResponses, ApiSecurity } from '../schemas/api.ts'

const Jwks = Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) })

const UserInfo = Type.Object({
  sub: Type.String(),
  name: Type.Optional(Type.String()),
  nickname: Type.Optional(Type.String()),
  preferred_username: Type.Optional(Type.String()),
  email: Type.Optional(Type.String({ description: 'Only once the address is confirmed' })),
  email_verified: Type.Optional(Type.Boolean()),
})

export const openidRoutes = routePlugin('oauth-openid-routes', (app) => {
  app.get(
    '/.well-known/openid-configuration',
    {
      schema: {
        tags: ['OAuth'],
        summary: 'OpenID Connect discovery',
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async () => openidConfiguration(app.settings),
  )

  app.get(
    JWKS_PATH,
    { schema: { tags: ['OAuth'], summary: 'Keys that sign id_tokens (JWKS)', response: { 200: Jwks } } },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300')
      return app.openid.jwks()
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
    (request) =>
      withPrincipal(request, app, (principal) => {
        if (!principal.scopes.includes('openid')) throw new InsufficientScope('openid')
        return { sub: String(principal.user.id), ...userClaims(principal.user, principal.scopes) }
      }),
  )
})
