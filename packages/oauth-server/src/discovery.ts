/** What the discovery documents say of this server (RFC 8414, OpenID Connect Discovery): exactly what it supports now. */
import type { OAuthSettings } from './config.ts'
import { SCOPES } from './domain/scopes.ts'
import { enabledGrantTypes } from './grants/index.ts'

export const JWKS_PATH = '/oauth/discovery/keys'
export const USERINFO_PATH = '/oauth/userinfo'

export function openidConfiguration(settings: OAuthSettings) {
  const base = metadata(settings)
  const { issuer } = settings
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
      'email_verified',
    ],
  }
}

export function metadata(settings: OAuthSettings) {
  const { issuer, implicitGrant, pkcePlain } = settings
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    introspection_endpoint: `${issuer}/oauth/introspect`,
    device_authorization_endpoint: `${issuer}/oauth/authorize_device`,
    jwks_uri: `${issuer}/oauth/discovery/keys`,
    scopes_supported: [...SCOPES],
    response_types_supported: implicitGrant ? ['code', 'token'] : ['code'],
    response_modes_supported: implicitGrant ? ['query', 'fragment'] : ['query'],
    grant_types_supported: [...enabledGrantTypes(settings), ...(implicitGrant ? ['implicit'] : [])],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: pkcePlain ? ['S256', 'plain'] : ['S256'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${issuer}/docs`,
  }
}
