/** RFC 8414 authorization server metadata: exactly what this server supports now. */
import Type from 'typebox'
import type { ServerContext } from '../context.ts'
import { SCOPES } from '../domain/scopes.ts'
import { enabledGrantTypes } from './token.ts'
import type { OAuthApp } from './types.ts'

export function metadata(context: ServerContext) {
  const { issuer, implicitGrant, pkcePlain } = context.settings
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    introspection_endpoint: `${issuer}/oauth/introspect`,
    jwks_uri: `${issuer}/oauth/discovery/keys`,
    scopes_supported: [...SCOPES],
    response_types_supported: implicitGrant ? ['code', 'token'] : ['code'],
    response_modes_supported: implicitGrant ? ['query', 'fragment'] : ['query'],
    grant_types_supported: [...enabledGrantTypes(context.settings), ...(implicitGrant ? ['implicit'] : [])],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: pkcePlain ? ['S256', 'plain'] : ['S256'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${issuer}/docs`,
  }
}

const Metadata = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    revocation_endpoint: Type.String(),
    introspection_endpoint: Type.String(),
    jwks_uri: Type.String(),
    scopes_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
    response_modes_supported: Type.Array(Type.String()),
    grant_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
    introspection_endpoint_auth_methods_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    authorization_response_iss_parameter_supported: Type.Boolean(),
    service_documentation: Type.String(),
  },
  { description: 'RFC 8414 metadata' },
)

export function metadataRoutes(app: OAuthApp, context: ServerContext): void {
  app.get(
    '/.well-known/oauth-authorization-server',
    { schema: { tags: ['OAuth'], summary: 'Authorization server metadata (RFC 8414)', response: { 200: Metadata } } },
    async () => metadata(context),
  )
}
