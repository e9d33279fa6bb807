/**
 * GET /oauth/token/info in GitLab's shape. A missing, unknown, expired or revoked token gets
 * RFC 6750's 401 invalid_token with a WWW-Authenticate challenge (GitLab answers 400
 * invalid_request here; we follow the RFC).
 */
import Type from 'typebox'
import type { ServerContext } from '../context.ts'
import { InvalidToken } from '../errors.ts'
import { lookupAccessToken, TOKEN_DESCRIPTIONS, TOKEN_INVALID } from '../plugins/api-auth.ts'
import { OAuthErrorBody } from './schemas.ts'
import { noStore } from './token.ts'
import type { OAuthApp } from './types.ts'

const TokenInfo = Type.Object({
  resource_owner_id: Type.Integer(),
  scope: Type.Array(Type.String()),
  expires_in: Type.Integer({ description: 'Seconds left' }),
  application: Type.Object({ uid: Type.Union([Type.String(), Type.Null()]) }),
  created_at: Type.Integer({ description: 'Unix time, seconds' }),
  scopes: Type.Array(Type.String({ description: 'Alias of scope' })),
  expires_in_seconds: Type.Integer({ description: 'Alias of expires_in' }),
})

export function tokenInfoRoutes(app: OAuthApp, context: ServerContext): void {
  app.get(
    '/oauth/token/info',
    {
      schema: {
        tags: ['OAuth'],
        summary: 'Information about an access token',
        description:
          'Token from `Authorization: Bearer` or `?access_token=`. Implicit-flow clients must check application.uid before trusting a token.',
        security: [{ bearer: [] }, { accessTokenQuery: [] }],
        querystring: Type.Object({ access_token: Type.Optional(Type.String()) }, { additionalProperties: true }),
        response: { 200: TokenInfo, 401: OAuthErrorBody },
      },
    },
    async (request, reply) => {
      noStore(reply)
      const authorization = request.headers.authorization
      const token =
        authorization && /^bearer /i.test(authorization)
          ? authorization.slice(7).trim()
          : (request.query as Record<string, unknown>).access_token
      if (typeof token !== 'string' || token === '') throw new InvalidToken(TOKEN_INVALID)
      const lookup = await lookupAccessToken(context, token)
      if (lookup.status !== 'active') throw new InvalidToken(TOKEN_DESCRIPTIONS[lookup.status])
      const { row, expiresIn } = lookup
      return {
        resource_owner_id: row.user.id,
        scope: row.scopes,
        expires_in: expiresIn,
        application: { uid: row.application_uid },
        created_at: Math.floor(row.token_created_at.getTime() / 1000),
        scopes: row.scopes,
        expires_in_seconds: expiresIn,
      }
    },
  )
}
