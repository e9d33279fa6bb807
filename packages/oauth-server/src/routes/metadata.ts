/**
 * RFC 8414 authorization server metadata (exactly what this server supports now), and RFC 9728
 * protected resource metadata of its own resources (`/api/v4`, userinfo).
 */
import { PROTECTED_RESOURCE_PATH, ProtectedResourceMetadata } from '@campus/shared'
import Type from 'typebox'
import { metadata, resourceMetadata } from '../discovery.ts'
import { routePlugin } from '../oauth-app.ts'

const Metadata = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    revocation_endpoint: Type.String(),
    introspection_endpoint: Type.String(),
    device_authorization_endpoint: Type.String(),
    pushed_authorization_request_endpoint: Type.String({ description: 'RFC 9126 5' }),
    registration_endpoint: Type.Optional(
      Type.String({ description: 'RFC 7591: while OAUTH_REGISTRATION is token or open' }),
    ),
    require_pushed_authorization_requests: Type.Boolean({
      description: 'RFC 9126 5: every application must push (an application may be required to on its own)',
    }),
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
    dpop_signing_alg_values_supported: Type.Array(Type.String(), { description: 'RFC 9449 5.1' }),
    service_documentation: Type.String(),
  },
  { description: 'RFC 8414 metadata' },
)

export const metadataRoutes = routePlugin('oauth-metadata-routes', (app) => {
  app.get(
    '/.well-known/oauth-authorization-server',
    { schema: { tags: ['OAuth'], summary: 'Authorization server metadata (RFC 8414)', response: { 200: Metadata } } },
    async () => metadata(app.settings),
  )
  app.get(
    PROTECTED_RESOURCE_PATH,
    {
      schema: {
        tags: ['OAuth'],
        summary: 'Protected resource metadata (RFC 9728): /api/v4 and userinfo',
        description:
          'The resource is this server itself (its issuer URL), whose /api/v4 and /oauth/userinfo take its tokens; every 401 there names this document in `resource_metadata` (RFC 9728 5.1).',
        response: { 200: ProtectedResourceMetadata },
      },
    },
    async () => resourceMetadata(app.settings),
  )
})
