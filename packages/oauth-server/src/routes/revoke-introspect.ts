/** POST /oauth/revoke (RFC 7009) and POST /oauth/introspect (RFC 7662). */
import Type from 'typebox'
import { lookupAccessToken } from '../api-auth.ts'
import { formatScope } from '../domain/scopes.ts'
import { digest } from '../domain/secrets.ts'
import { InvalidClient, InvalidRequest, UnauthorizedClient } from '../errors.ts'
import { authenticateClient, readClientCredentials } from '../grants/client-auth.ts'
import { type OAuthServices, routePlugin } from '../oauth-app.ts'
import { noStore, requireFormBody, SMALL_ANSWERS } from '../oauth-endpoints.ts'
import {
  findAccessTokenWithUser,
  findRefreshToken,
  revokeAccessToken,
  revokeGrant,
  tokenUsable,
} from '../repositories/tokens.ts'
import { findUserById } from '../repositories/users.ts'
import { OAuthErrorResponses } from '../schemas/oauth.ts'

const TokenBody = Type.Object(
  {
    token: Type.Optional(Type.String({ description: 'The token' })),
    token_type_hint: Type.Optional(Type.String({ description: 'access_token or refresh_token' })),
    client_id: Type.Optional(Type.String()),
    client_secret: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)

type Body = Record<string, string | undefined>

async function clientOf(
  services: Pick<OAuthServices, 'db' | 'changes'>,
  authorization: string | undefined,
  body: Body,
) {
  const credentials = readClientCredentials(authorization, body)
  if (!credentials) throw new InvalidClient('Client authentication is required.')
  return { client: await authenticateClient(services, credentials), credentials }
}

function requireToken(body: Body): string {
  const token = body.token
  if (!token) throw new InvalidRequest('Missing required parameter: token.')
  return token
}

const Introspection = Type.Object({
  active: Type.Boolean(),
  scope: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
  token_type: Type.Optional(Type.String()),
  exp: Type.Optional(Type.Integer()),
  iat: Type.Optional(Type.Integer()),
  sub: Type.Optional(Type.String()),
  iss: Type.Optional(Type.String()),
  cnf: Type.Optional(
    Type.Object(
      { jkt: Type.String({ description: 'JWK SHA-256 thumbprint of the key' }) },
      { description: 'A DPoP-bound token: the key it is bound to (RFC 9449 6.2)' },
    ),
  ),
})

export const revokeIntrospectRoutes = routePlugin('oauth-revoke-introspect-routes', (app) => {
  const { db } = app

  app.post(
    '/oauth/revoke',
    {
      ...SMALL_ANSWERS,
      schema: {
        tags: ['OAuth'],
        summary: 'Token revocation (RFC 7009)',
        description:
          'Client authentication as at the token endpoint. 200 {} also for unknown tokens. A refresh token revokes its whole grant; an access token only itself. A token of another client: 403 unauthorized_client. A token issued without a client (password grant) is revoked by presenting it, with or without client authentication (as Doorkeeper).',
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenBody,
        response: { 200: Type.Object({}), ...OAuthErrorResponses },
      },
    },
    async (request, reply) => {
      noStore(reply)
      requireFormBody(request)
      const body = request.body as Body
      const credentials = readClientCredentials(request.headers.authorization, body)
      const client = credentials ? await authenticateClient(app, credentials) : undefined
      const token = digest(requireToken(body))
      const refreshFirst = body.token_type_hint === 'refresh_token'
      const accessOf = async () => {
        const row = await findAccessTokenWithUser(db, token)
        return row && { id: row.token_id, application_id: row.application_id }
      }
      const access = refreshFirst ? undefined : await accessOf()
      const refresh = access ? undefined : await findRefreshToken(db, token)
      const found = access ?? refresh ?? (refreshFirst ? await accessOf() : undefined)
      // Doorkeeper's rule: a token issued without a client is its own proof; any other token
      // needs the client it was issued to
      const anonymous = found !== undefined && found.application_id === null
      if (!client && !anonymous) throw new InvalidClient('Client authentication is required.')
      if (!found) return {}
      if (!anonymous && found.application_id !== client?.id) {
        throw new UnauthorizedClient('You are not authorized to revoke this token', 403)
      }
      // a refresh token ends its whole grant; an access token only itself
      const grant = refresh !== undefined && found === refresh
      await app.changes.commit((trx) => (grant ? revokeGrant(trx, refresh.grant_id) : revokeAccessToken(trx, found.id)))
      await app.audit.record({
        event: 'oauth_token_revoked',
        author: client ? { client: { uid: client.uid, name: client.name } } : 'anonymous',
        target: { type: grant ? 'OauthRefreshToken' : 'OauthAccessToken', id: found.id },
        message: grant
          ? 'Revoked a refresh token and its whole grant (RFC 7009)'
          : 'Revoked an access token (RFC 7009)',
        ip: request.ip,
      })
      return {}
    },
  )

  app.post(
    '/oauth/introspect',
    {
      ...SMALL_ANSWERS,
      schema: {
        tags: ['OAuth'],
        summary: 'Token introspection (RFC 7662)',
        description:
          'For confidential clients (HTTP Basic or client_secret_post). A DPoP-bound token says so (token_type DPoP) and names its key in cnf.jkt (RFC 9449 6.2). A token is reported active only to the client it was issued to, and an access token to a resource server (an instance-wide application registered with `pnpm oauth resource-server:register`, such as the energy data API).',
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenBody,
        response: { 200: Introspection, ...OAuthErrorResponses },
      },
    },
    async (request, reply) => {
      noStore(reply)
      requireFormBody(request)
      const body = request.body as Body
      const { client, credentials } = await clientOf(app, request.headers.authorization, body)
      if (!client.confidential) {
        throw new InvalidClient(
          'Introspection is for confidential clients.',
          credentials.method === 'client_secret_basic',
        )
      }
      const presented = requireToken(body)
      const iss = app.settings.issuer
      const access = body.token_type_hint === 'refresh_token' ? undefined : await lookupAccessToken(app, presented)
      if (access && access.status !== 'invalid') {
        // a resource server asks about the tokens of every client; any other client about its own
        if (access.status !== 'active') return { active: false }
        const { row } = access
        if (!(client.resource_server || row.application_id === client.id) || !tokenUsable(row)) return { active: false }
        return {
          active: true,
          scope: formatScope(row.scopes),
          ...(row.application_uid === null ? {} : { client_id: row.application_uid }),
          // a token of the application itself (client credentials) has no user
          ...(row.user ? { username: row.user.username, sub: String(row.user.id) } : {}),
          token_type: row.dpop_jkt ? 'DPoP' : 'Bearer',
          exp: Math.floor(row.expires_at.getTime() / 1000),
          iat: Math.floor(row.token_created_at.getTime() / 1000),
          iss,
          // a resource server checks a DPoP proof against this key (RFC 9449 6.2)
          ...(row.dpop_jkt ? { cnf: { jkt: row.dpop_jkt } } : {}),
        }
      }
      const refresh = await findRefreshToken(db, digest(presented))
      if (!refresh || refresh.revoked_at || refresh.rotated_at || refresh.application_id !== client.id) {
        return { active: false }
      }
      // a locked account's refresh token cannot be used, so it is not active
      const user = await findUserById(db, refresh.user_id)
      if (!user || user.locked) return { active: false }
      return {
        active: true,
        scope: formatScope(refresh.scopes),
        client_id: client.uid,
        username: user.username,
        // RFC 7662 2.2: token_type is an access token's type (RFC 6749 5.1); a refresh token has
        // none, nor an expiry of its own (Doorkeeper leaves both out too)
        iat: Math.floor(refresh.created_at.getTime() / 1000),
        sub: String(refresh.user_id),
        iss,
        ...(refresh.dpop_jkt ? { cnf: { jkt: refresh.dpop_jkt } } : {}),
      }
    },
  )
})
