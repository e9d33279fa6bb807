/**
 * POST /oauth/token: a short chain of named steps, then the grant's own module.
 * no-store -> form body only -> read client credentials -> select grant -> authenticate client
 * -> check the client may use the grant -> allow-listed parameters -> grant handler.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import Type from 'typebox'
import type { OAuthSettings } from '../config.ts'
import type { ServerContext } from '../context.ts'
import type { Application } from '../db/schema.ts'
import { InvalidClient, InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from '../errors.ts'
import { authenticateClient, readClientCredentials } from '../grants/client-auth.ts'
import { grants } from '../grants/index.ts'
import type { GrantHandler } from '../grants/types.ts'
import { OAuthErrorResponses, TokenResponseBody } from './schemas.ts'
import type { OAuthApp } from './types.ts'

const param = (description: string) => Type.Optional(Type.String({ description }))

export const TokenRequestBody = Type.Object(
  {
    grant_type: param('authorization_code, password or refresh_token'),
    client_id: param('Application ID (or HTTP Basic)'),
    client_secret: param('Client secret of a confidential application (or HTTP Basic)'),
    code: param('authorization_code: the code from the redirect'),
    redirect_uri: param('authorization_code: the redirect_uri of the authorization request'),
    code_verifier: param('authorization_code: the PKCE verifier'),
    username: param('password: the resource owner username'),
    password: param('password: the resource owner password'),
    refresh_token: param('refresh_token: the refresh token'),
    scope: param('password / refresh_token: space-delimited scopes'),
  },
  { additionalProperties: true },
)

type TokenBody = Record<string, string | undefined>

export function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
}

export function requireFormBody(request: FastifyRequest): void {
  const type = request.headers['content-type'] ?? ''
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new InvalidRequest('The request body must be application/x-www-form-urlencoded.')
  }
}

/** Grant types this server offers now (the password grant can be switched off). */
export function enabledGrantTypes(settings: OAuthSettings): string[] {
  return Object.keys(grants).filter((g) => g !== 'password' || settings.passwordGrant)
}

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

export function tokenRoutes(app: OAuthApp, context: ServerContext): void {
  app.post(
    '/oauth/token',
    {
      schema: {
        tags: ['OAuth'],
        summary: 'Token endpoint (RFC 6749 3.2)',
        description:
          'Form-encoded. Grants: authorization_code (PKCE S256), password (client authentication optional; refused for users with 2FA; no refresh token), refresh_token (rotated; reuse revokes the family). Client authentication by HTTP Basic or client_id/client_secret in the body.',
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenRequestBody,
        response: { 200: TokenResponseBody, ...OAuthErrorResponses },
      },
    },
    async (request, reply) => {
      noStore(reply)
      requireFormBody(request)
      const body = request.body as TokenBody
      const credentials = readClientCredentials(request.headers.authorization, body)
      const handler = selectGrant(context.settings, body.grant_type)
      const client = credentials ? await authenticateClient(context, credentials) : undefined
      if (handler.clientRequired && !client) {
        throw new InvalidClient('Client authentication failed: client_id is required for this grant.')
      }
      checkClientGrant(client, body.grant_type as string)
      const params = allowListed(body, handler.parameters)
      return handler.handle(context, { params, client, ip: request.ip })
    },
  )
}
