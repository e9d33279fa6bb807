/**
 * Validation of an authorization request (RFC 6749 4.1.1 / 4.2.1, RFC 7636 4.3, RFC 9700 2.1).
 * Until client_id and redirect_uri are known good, errors are shown on a page (never a
 * redirect: no open redirector); after that they go back to the client (4.1.2.1 / 4.2.2.1).
 */
import type { Kysely } from 'kysely'
import type { OAuthSettings } from '../config.ts'
import type { Application, OAuthDB } from '../db/schema.ts'
import { AUTHORIZATION_CODE_TTL } from '../domain/lifetimes.ts'
import { isValidCodeChallenge } from '../domain/pkce.ts'
import { matchRedirectUri } from '../domain/redirect-uri.ts'
import { resolveScopes } from '../domain/scopes.ts'
import { digest, PREFIX } from '../domain/secrets.ts'
import {
  InvalidRequest,
  InvalidScope,
  type OAuthError,
  UnauthorizedClient,
  UnsupportedResponseType,
} from '../errors.ts'
import { findApplicationByUid } from '../repositories/applications.ts'
import { openPushedRequest } from '../repositories/pushed-requests.ts'

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
  /** RFC 9449 10: the DPoP key the code is for (`dpop_jkt`, or the proof sent with a pushed request) */
  dpopJkt: string | undefined
  /** RFC 9126: the pushed request this one came from, used up by the decision */
  pushed: { id: number; requestUri: string } | undefined
}

/** A JWK SHA-256 thumbprint (RFC 7638): 43 characters of base64url. */
const JKT = /^[A-Za-z0-9_-]{43}$/

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
  'dpop_jkt',
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

/** A form body's parameters (a repeated one arrives as an array). */
export function fromForm(body: unknown): ParameterSource {
  const record = (body ?? {}) as Record<string, unknown>
  return {
    get: (name) => {
      const v = record[name]
      return typeof v === 'string' ? v : Array.isArray(v) ? String(v[0]) : undefined
    },
    repeated: (name) => Array.isArray(record[name]) && (record[name] as unknown[]).length > 1,
  }
}

export function fromRecord(record: Readonly<Record<string, string>>): ParameterSource {
  return { get: (name) => record[name], repeated: () => false }
}

/**
 * The authorization request a query or form makes: its own parameters, or with `request_uri`
 * (RFC 9126 4) those its client pushed, and no others (`client_id` must name that client).
 */
export async function validateAuthorizationRequest(
  db: Kysely<OAuthDB>,
  settings: OAuthSettings,
  given: ParameterSource,
  /** validating a request being pushed (RFC 9126 2.1), which a client that must push may make */
  pushing = false,
): Promise<Validation> {
  const clientId = given.get('client_id')
  if (!clientId || given.repeated('client_id')) {
    return { kind: 'page', message: 'The request has no valid client_id.' }
  }
  const client = await findApplicationByUid(db, clientId)
  if (!client) return { kind: 'page', message: 'The client_id does not name a registered application.' }
  let source = given
  let pushed: AuthorizationRequest['pushed']
  let pushedJkt: string | undefined
  const requestUri = given.get('request_uri')
  if (requestUri !== undefined) {
    const found =
      requestUri.startsWith(PREFIX.requestUri) && !given.repeated('request_uri')
        ? await openPushedRequest(db, digest(requestUri), client.id, AUTHORIZATION_CODE_TTL)
        : undefined
    if (!found) {
      return { kind: 'page', message: 'The request_uri is unknown, expired, already used, or of another client.' }
    }
    source = fromRecord(found.parameters)
    pushed = { id: found.id, requestUri }
    pushedJkt = found.dpop_jkt ?? undefined
  }
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
  if (!pushed && !pushing && (client.require_pushed_authorization_requests || settings.requirePushedRequests)) {
    return fail(
      new InvalidRequest('Pushed authorization request required: post the request to /oauth/par first (RFC 9126).'),
    )
  }
  const dpopJkt = pushedJkt ?? source.get('dpop_jkt')
  if (dpopJkt !== undefined && !JKT.test(dpopJkt)) {
    return fail(new InvalidRequest('dpop_jkt must be a JWK SHA-256 thumbprint (43 characters of base64url).'))
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
      dpopJkt,
      pushed,
    },
  }
}
