/**
 * Client metadata of dynamic registration (RFC 7591 2) as an application of this server: what a
 * registering client may ask for, by the registration mode. An open registration (anyone, no
 * token) makes a public client with PKCE and never a powerful scope; an initial access token an
 * administrator issued also allows a confidential client and every scope. The redirect URIs pass
 * the rules of the applications page (`redirectUriProblem`). Unknown metadata is ignored (2).
 */
import { DEVICE_CODE_GRANT } from './grant-types.ts'
import { redirectUriProblem } from './redirect-uri.ts'
import { isKnownScope, POWERFUL_SCOPES, parseScope, SCOPES } from './scopes.ts'

/** OAUTH_REGISTRATION: off, with an administrator's initial access token, or open to anyone. */
export type RegistrationMode = 'off' | 'token' | 'open'

/** How a registration was allowed: by an initial access token, or by the open mode. */
export type RegistrationAuthority = 'token' | 'open'

export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const
export type AuthMethod = (typeof AUTH_METHODS)[number]

/** The grants a registered client may use: no legacy grant (implicit, password; RFC 9700 2.1.2, 2.4). */
const REGISTRABLE_GRANTS = ['authorization_code', 'refresh_token', 'client_credentials', DEVICE_CODE_GRANT]

const MAX_REDIRECT_URIS = 10
const MAX_NAME = 255

export interface ClientMetadata {
  redirect_uris?: unknown
  token_endpoint_auth_method?: unknown
  grant_types?: unknown
  response_types?: unknown
  client_name?: unknown
  scope?: unknown
}

/** What the server registers of the metadata. */
export interface RegisteredMetadata {
  name: string
  redirectUris: string[]
  scopes: string[]
  grantTypes: string[]
  authMethod: AuthMethod
  confidential: boolean
}

export type MetadataCheck =
  | { ok: true; client: RegisteredMetadata }
  | { ok: false; error: 'invalid_redirect_uri' | 'invalid_client_metadata'; description: string }

const invalid = (description: string): MetadataCheck => ({ ok: false, error: 'invalid_client_metadata', description })

const strings = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string')

/** The scopes a registration may hold. */
export const registrableScopes = (authority: RegistrationAuthority): string[] =>
  SCOPES.filter((s) => authority === 'token' || !(POWERFUL_SCOPES as readonly string[]).includes(s))

export function checkClientMetadata(metadata: ClientMetadata, authority: RegistrationAuthority): MetadataCheck {
  const method = metadata.token_endpoint_auth_method ?? (authority === 'open' ? 'none' : 'client_secret_basic')
  if (!AUTH_METHODS.includes(method as AuthMethod)) {
    return invalid(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`)
  }
  const authMethod = method as AuthMethod
  const confidential = authMethod !== 'none'
  if (confidential && authority === 'open') {
    return invalid('an open registration makes public clients only: token_endpoint_auth_method must be none')
  }
  const grants = metadata.grant_types ?? ['authorization_code']
  if (!strings(grants) || grants.length === 0) return invalid('grant_types must be a list of grant types')
  const refused = grants.find((g) => !REGISTRABLE_GRANTS.includes(g))
  if (refused !== undefined) return invalid(`the grant type ${refused} is not offered to registered clients`)
  if (grants.includes('client_credentials') && (!confidential || authority === 'open')) {
    return invalid('client_credentials is for confidential clients registered with an initial access token')
  }
  const responses = metadata.response_types ?? (grants.includes('authorization_code') ? ['code'] : [])
  if (!strings(responses) || responses.some((r) => r !== 'code')) {
    return invalid('response_types may hold code only (the implicit grant is not offered)')
  }
  if (responses.includes('code') !== grants.includes('authorization_code')) {
    return invalid('response_types code goes with grant_types authorization_code (RFC 7591 2.1)')
  }
  const redirectUris = metadata.redirect_uris ?? []
  if (!strings(redirectUris))
    return { ok: false, error: 'invalid_redirect_uri', description: 'redirect_uris must be a list of URIs' }
  if (grants.includes('authorization_code') && redirectUris.length === 0) {
    return { ok: false, error: 'invalid_redirect_uri', description: 'redirect_uris is required for authorization_code' }
  }
  if (redirectUris.length > MAX_REDIRECT_URIS) {
    return { ok: false, error: 'invalid_redirect_uri', description: `at most ${MAX_REDIRECT_URIS} redirect URIs` }
  }
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri)
    if (problem) return { ok: false, error: 'invalid_redirect_uri', description: `redirect URI ${uri} ${problem}` }
  }
  const allowed = registrableScopes(authority)
  if (metadata.scope !== undefined && typeof metadata.scope !== 'string') return invalid('scope must be a string')
  const scopes = metadata.scope === undefined ? allowed : parseScope(metadata.scope)
  if (scopes.length === 0) return invalid('scope names no scope')
  const unknown = scopes.find((s) => !isKnownScope(s))
  if (unknown !== undefined) return invalid(`the scope ${unknown} is unknown`)
  const powerful = scopes.find((s) => !allowed.includes(s))
  if (powerful !== undefined) {
    return invalid(`the scope ${powerful} needs a registration with an initial access token`)
  }
  const given = metadata.client_name
  if (given !== undefined && (typeof given !== 'string' || !given.trim() || given.length > MAX_NAME)) {
    return invalid(`client_name must be 1 to ${MAX_NAME} characters`)
  }
  const name = (given as string | undefined)?.trim() ?? defaultName(redirectUris)
  return { ok: true, client: { name, redirectUris, scopes, grantTypes: grants, authMethod, confidential } }
}

/** A client that gives no name is named after where it is (its first redirect URI's host). */
function defaultName(redirectUris: string[]): string {
  const first = redirectUris[0]
  return first ? `Client at ${new URL(first).host || new URL(first).protocol}` : 'Registered client'
}
