/** What the discovery documents say of this server (RFC 8414, OpenID Connect Discovery): exactly what it supports now. */
import { DPOP_ALGORITHMS, protectedResourceMetadata } from '@campus/shared'
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
  const { issuer, implicitGrant, pkcePlain, requirePushedRequests } = settings
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    introspection_endpoint: `${issuer}/oauth/introspect`,
    device_authorization_endpoint: `${issuer}/oauth/authorize_device`,
    pushed_authorization_request_endpoint: `${issuer}/oauth/par`,
    // RFC 7591: only while someone may register
    ...(settings.registration && settings.registration !== 'off'
      ? { registration_endpoint: `${issuer}/oauth/register` }
      : {}),
    require_pushed_authorization_requests: requirePushedRequests ?? false,
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
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    service_documentation: `${issuer}/docs`,
  }
}

/** The scopes of this server's own resources: /api/v4 (GitLab's) and userinfo (OpenID Connect). */
const RESOURCE_SCOPES = ['api', 'read_api', 'read_user', 'openid', 'profile', 'email']

/** RFC 9728 metadata of this server as a resource: its issuer URL, where /api/v4 and userinfo live. */
export function resourceMetadata(settings: Pick<OAuthSettings, 'issuer'>) {
  return protectedResourceMetadata({
    resource: settings.issuer,
    issuer: settings.issuer,
    scopes: RESOURCE_SCOPES,
    bearerMethods: ['header', 'query'],
    name: 'GitLab-compatible API (/api/v4) and OpenID Connect userinfo',
  })
}
