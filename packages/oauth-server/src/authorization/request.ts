/**
 * Validation of an authorization request (RFC 6749 4.1.1 / 4.2.1, RFC 7636 4.3, RFC 9700 2.1).
 * Until client_id and redirect_uri are known good, errors are shown on a page (never a
 * redirect: no open redirector); after that they go back to the client (4.1.2.1 / 4.2.2.1).
 */
import type { Kysely } from 'kysely'
import type { OAuthSettings } from '../config.ts'
import type { Application, OAuthDB } from '../db/schema.ts'
import { isValidCodeChallenge } from '../domain/pkce.ts'
import { matchRedirectUri } from '../domain/redirect-uri.ts'
import { resolveScopes } from '../domain/scopes.ts'
import {
  InvalidRequest,
  InvalidScope,
  type OAuthError,
  UnauthorizedClient,
  UnsupportedResponseType,
} from '../errors.ts'
import { findApplicationByUid } from '../repositories/applications.ts'

export type ResponseType = 'code' | 'token'

export interface AuthorizationRequest {
  client: Application
  redirectUri: string
  responseType: ResponseType
  scopes: string[]
  state: string | undefined
  codeChallenge: string | undefined
  codeChallengeMethod: 'S256' | 'plain' | undefined
  /** OpenID Connect: echoed in the id_token */
  nonce: string | undefined
}

/** Where an error goes once the redirect URI is trusted. */
export interface RedirectTarget {
  redirectUri: string
  fragment: boolean
  state: string | undefined
}

export type Validation =
  | { kind: 'ok'; request: AuthorizationRequest }
  | { kind: 'page'; message: string }
  | { kind: 'redirect'; error: OAuthError; target: RedirectTarget; client: Application }

/** The parameters the authorization endpoint reads; the consent form carries exactly these. */
export const AUTHORIZATION_PARAMETERS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'nonce',
] as const

/** Reads parameters from a query string or form, counting repeats (RFC 6749 3.1: each at most once). */
export interface ParameterSource {
  get(name: string): string | undefined
  repeated(name: string): boolean
}

export function fromSearchParams(params: URLSearchParams): ParameterSource {
  return {
    get: (name) => params.get(name) ?? undefined,
    repeated: (name) => params.getAll(name).length > 1,
  }
}

export async function validateAuthorizationRequest(
  db: Kysely<OAuthDB>,
  settings: OAuthSettings,
  source: ParameterSource,
): Promise<Validation> {
  const clientId = source.get('client_id')
  if (!clientId || source.repeated('client_id')) {
    return { kind: 'page', message: 'The request has no valid client_id.' }
  }
  const client = await findApplicationByUid(db, clientId)
  if (!client) return { kind: 'page', message: 'The client_id does not name a registered application.' }
  const requested = source.get('redirect_uri')
  if (!requested || source.repeated('redirect_uri')) {
    return { kind: 'page', message: 'The request has no valid redirect_uri.' }
  }
  const registered = matchRedirectUri(requested, client.redirect_uris)
  if (!registered) {
    return { kind: 'page', message: 'The redirect_uri is not registered for this application.' }
  }

  const responseTypeRaw = source.get('response_type')
  const state = source.get('state')
  const target: RedirectTarget = { redirectUri: requested, fragment: responseTypeRaw === 'token', state }
  const fail = (error: OAuthError): Validation => ({ kind: 'redirect', error, target, client })

  for (const name of AUTHORIZATION_PARAMETERS) {
    if (source.repeated(name)) return fail(new InvalidRequest(`The parameter ${name} is repeated.`))
  }
  if (!responseTypeRaw) return fail(new InvalidRequest('Missing required parameter: response_type.'))
  if (responseTypeRaw !== 'code' && responseTypeRaw !== 'token') {
    return fail(new UnsupportedResponseType('The authorization server does not support this response type.'))
  }
  const responseType: ResponseType = responseTypeRaw
  if (responseType === 'token' && !settings.implicitGrant) {
    return fail(new UnsupportedResponseType('The implicit grant is disabled on this server.'))
  }
  const grant = responseType === 'code' ? 'authorization_code' : 'implicit'
  if (!client.grant_types.includes(grant)) {
    return fail(new UnauthorizedClient('The client is not authorized to request an authorization using this method.'))
  }

  const scope = resolveScopes(source.get('scope'), client.scopes)
  if (!scope.ok) return fail(new InvalidScope(scope.reason))

  let codeChallenge: string | undefined
  let codeChallengeMethod: 'S256' | 'plain' | undefined
  if (responseType === 'code') {
    codeChallenge = source.get('code_challenge')
    const method = source.get('code_challenge_method')
    if (codeChallenge === undefined) {
      if (method !== undefined) return fail(new InvalidRequest('code_challenge_method without code_challenge.'))
      if (!client.confidential) {
        return fail(new InvalidRequest('PKCE is required for public clients: send code_challenge (S256).'))
      }
    } else {
      // RFC 7636 4.3: an absent method means plain
      const effective = method ?? 'plain'
      if (effective !== 'S256' && !(effective === 'plain' && settings.pkcePlain)) {
        return fail(new InvalidRequest('code_challenge_method must be S256.'))
      }
      if (!isValidCodeChallenge(codeChallenge)) {
        return fail(new InvalidRequest('code_challenge must be 43 to 128 characters of [A-Za-z0-9-._~].'))
      }
      codeChallengeMethod = effective
    }
  }
  return {
    kind: 'ok',
    request: {
      client,
      redirectUri: requested,
      responseType,
      scopes: scope.scopes,
      state,
      codeChallenge,
      codeChallengeMethod,
      nonce: source.get('nonce'),
    },
  }
}
