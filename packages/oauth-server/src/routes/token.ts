/**
 * POST /oauth/token: a short chain of named steps, then the grant's own module.
 * no-store -> form body only -> read client credentials -> select grant -> authenticate client
 * -> check the client may use the grant -> allow-listed parameters -> grant handler.
 */

import Type from 'typebox'
import { applicationTarget } from '../audit.ts'
import type { OAuthSettings } from '../config.ts'
import type { Application } from '../db/schema.ts'
import { InvalidClient, InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from '../errors.ts'
import { authenticateClient, readClientCredentials } from '../grants/client-auth.ts'
import { enabledGrantTypes, grants } from '../grants/index.ts'
import type { GrantHandler } from '../grants/types.ts'
import { routePlugin } from '../oauth-app.ts'
import { noStore, requireFormBody, SMALL_ANSWERS, senderKey } from '../oauth-endpoints.ts'
import { OAuthErrorResponses, TokenResponseBody } from '../schemas/oauth.ts'

const param = (description: string) => Type.Optional(Type.String({ description }))

export const TokenRequestBody = Type.Object(
  {
    grant_type: param(
      'authorization_code, password, refresh_token, client_credentials or urn:ietf:params:oauth:grant-type:device_code',
    ),
    client_id: param('Application ID (or HTTP Basic)'),
    client_secret: param('Client secret of a confidential application (or HTTP Basic)'),
    code: param('authorization_code: the code from the redirect'),
    redirect_uri: param('authorization_code: the redirect_uri of the authorization request'),
    code_verifier: param('authorization_code: the PKCE verifier'),
    username: param('password: the resource owner username'),
    password: param('password: the resource owner password'),
    refresh_token: param('refresh_token: the refresh token'),
    scope: param('password / refresh_token / client_credentials: space-delimited scopes'),
    device_code: param('urn:ietf:params:oauth:grant-type:device_code: the device code (RFC 8628 3.4)'),
  },
  { additionalProperties: true },
)

type TokenBody = Record<string, string | undefined>

function selectGrant(settings: OAuthSettings, grantType: string | undefined): GrantHandler {
  if (grantType === undefined || grantType === '') throw new InvalidRequest('Missing required parameter: grant_type.')
  const handler = grants[grantType]
  if (!handler || !enabledGrantTypes(settings).includes(grantType)) {
    throw new UnsupportedGrantType('The authorization grant type is not supported by the authorization server.')
  }
  return handler
}

function checkClientGrant(client: Application | undefined, grantType: string): void {
  if (client && !client.grant_types.includes(grantType)) {
    throw new UnauthorizedClient('The client is not authorized to use this authorization grant type.')
  }
}

function allowListed(body: TokenBody, names: readonly string[]): Record<string, string | undefined> {
  const params: Record<string, string | undefined> = {}
  for (const name of names) params[name] = body[name]
  return params
}

export const tokenRoutes = routePlugin('oauth-token-routes', (app) => {
  app.post(
    '/oauth/token',
    {
      ...SMALL_ANSWERS,
      schema: {
        tags: ['OAuth'],
        summary: 'Token endpoint (RFC 6749 3.2)',
        description:
          'Form-encoded. Grants: authorization_code (PKCE S256), password (client authentication optional; refused for users with 2FA; no refresh token), refresh_token (rotated; reuse revokes the family), client_credentials (confidential applications that switched it on; a token with no user), urn:ietf:params:oauth:grant-type:device_code (RFC 8628: authorization_pending, slow_down, expired_token, access_denied while polling). Client authentication by HTTP Basic or client_id/client_secret in the body. A `DPoP` header (RFC 9449) binds the tokens to its key: token_type DPoP (and the refresh token of a public client); a refused proof is 400 invalid_dpop_proof, or use_dpop_nonce with the nonce in `DPoP-Nonce` when nonces are on.',
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenRequestBody,
        response: { 200: TokenResponseBody, ...OAuthErrorResponses },
      },
    },
    async (request, reply) => {
      noStore(reply)
      requireFormBody(request)
      const body = request.body as TokenBody
      const dpopJkt = await senderKey(request, reply, app, '/oauth/token')
      const credentials = readClientCredentials(request.headers.authorization, body)
      const handler = selectGrant(app.settings, body.grant_type)
      const client = credentials ? await authenticateClient(app, credentials) : undefined
      if (handler.clientRequired && !client) {
        throw new InvalidClient('Client authentication failed: client_id is required for this grant.')
      }
      checkClientGrant(client, body.grant_type as string)
      const params = allowListed(body, handler.parameters)
      const issued = await handler.handle(app, { params, client, ip: request.ip, dpopJkt })
      // written with the others of the same second: one insert, not a commit per exchange
      app.audit.soon({
        event: 'oauth_token_issued',
        author: client ? { client: { uid: client.uid, name: client.name } } : 'anonymous',
        ...(client ? { target: applicationTarget(client) } : {}),
        message: `Issued ${issued.refresh_token ? 'an access and a refresh token' : 'an access token'} (${body.grant_type}, ${issued.token_type}, ${issued.scope})`,
        ip: request.ip,
      })
      return issued
    },
  )
})
