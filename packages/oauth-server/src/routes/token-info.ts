/**
 * GET /oauth/token/info in GitLab's shape. The token is read where GitLab reads it
 * (`access_token`, `Authorization: Bearer`, `bearer_token`). A missing, unknown, expired or
 * revoked token, or one of a locked account, gets GitLab's answer: Doorkeeper's 400
 * invalid_request (app/controllers/oauth/token_info_controller.rb).
 */
import Type from 'typebox'
import { bindingError, lookupAccessToken, oauthTokenOf, proofKeyOf } from '../api-auth.ts'
import { TokenInfoRefused } from '../errors.ts'
import { routePlugin } from '../oauth-app.ts'
import { noStore, SMALL_ANSWERS } from '../oauth-endpoints.ts'
import { tokenUsable } from '../repositories/tokens.ts'
import { OAuthErrorBody } from '../schemas/oauth.ts'

const TokenInfo = Type.Object({
  resource_owner_id: Type.Union([Type.Integer(), Type.Null()], { description: 'null for a client credentials token' }),
  scope: Type.Array(Type.String()),
  expires_in: Type.Integer({ description: 'Seconds left' }),
  application: Type.Object({ uid: Type.Union([Type.String(), Type.Null()]) }),
  created_at: Type.Integer({ description: 'Unix time, seconds' }),
  scopes: Type.Array(Type.String({ description: 'Alias of scope' })),
  expires_in_seconds: Type.Integer({ description: 'Alias of expires_in' }),
  cnf: Type.Optional(
    Type.Object(
      { jkt: Type.String({ description: 'JWK SHA-256 thumbprint of the key' }) },
      { description: 'A DPoP-bound token: the key it is bound to (RFC 9449 6)' },
    ),
  ),
})

export const tokenInfoRoutes = routePlugin('oauth-token-info-routes', (app) => {
  app.get(
    '/oauth/token/info',
    {
      ...SMALL_ANSWERS,
      schema: {
        tags: ['OAuth'],
        summary: 'Information about an access token',
        description:
          'Token from `?access_token=`, `Authorization: Bearer` or `?bearer_token=`; a DPoP-bound token as `Authorization: DPoP` with its proof, and only so (its key in `cnf.jkt`). Implicit-flow clients must check application.uid before trusting a token. A missing or unusable token: 400 invalid_request, as GitLab; a refused DPoP proof: 401 with a DPoP challenge (RFC 9449).',
        security: [{ bearer: [] }, { dpop: [] }, { accessTokenQuery: [] }, { bearerTokenQuery: [] }],
        querystring: Type.Object(
          { access_token: Type.Optional(Type.String()), bearer_token: Type.Optional(Type.String()) },
          { additionalProperties: true },
        ),
        response: { 200: TokenInfo, 400: OAuthErrorBody, 401: OAuthErrorBody },
      },
    },
    async (request, reply) => {
      noStore(reply)
      const credential = oauthTokenOf(request)
      if (credential === undefined) throw new TokenInfoRefused(false)
      const proofKey = credential.dpop ? await proofKeyOf(request, app, credential.token) : undefined
      const lookup = await lookupAccessToken(app, credential.token)
      if (lookup.status !== 'active' || !tokenUsable(lookup.row)) throw new TokenInfoRefused(true)
      const refusal = bindingError(lookup.row, proofKey)
      if (refusal) throw refusal
      const { row, expiresIn } = lookup
      return {
        resource_owner_id: row.user?.id ?? null,
        scope: row.scopes,
        expires_in: expiresIn,
        application: { uid: row.application_uid },
        created_at: Math.floor(row.token_created_at.getTime() / 1000),
        scopes: row.scopes,
        expires_in_seconds: expiresIn,
        ...(row.dpop_jkt ? { cnf: { jkt: row.dpop_jkt } } : {}),
      }
    },
  )
})
