/** RFC 8414 authorization server metadata: exactly what this server supports now. */
import Type from 'typebox'
import { metadata } from '../discovery.ts'
import { routePlugin } from '../oauth-app.ts'

const Metadata = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    revocation_endpoint: Type.String(),
    introspection_endpoint: Type.String(),
    device_authorization_endpoint: Type.String(),
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

export const metadataRoutes = routePlugin('oauth-metadata-routes', (app) => {
  app.get(
    '/.well-known/oauth-authorization-server',
    { schema: { tags: ['OAuth'], summary: 'Authorization server metadata (RFC 8414)', response: { 200: Metadata } } },
    async () => metadata(app.settings),
  )
})
