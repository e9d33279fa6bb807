import { type DpopProofError, dpopChallenge, type ErrorFormat, HttpError } from '@campus/shared'

/**
 * RFC 6749 section 5.2 error body: `{"error": "...", "error_description": "..."}`, never cached.
 * Every RFC error code is a subclass below; `body()` is the one serializer, and `toParams()`
 * the same error as authorization-response parameters (RFC 6749 4.1.2.1 / 4.2.2.1).
 */
export class OAuthError extends HttpError {
  readonly error: string

  constructor(statusCode: number, error: string, description: string, headers?: Record<string, string>) {
    super(statusCode, description, { headers: { 'cache-control': 'no-store', pragma: 'no-cache', ...headers } })
    this.error = error
  }

  override body(): Record<string, unknown> {
    return { error: this.error, error_description: this.message }
  }

  toParams(): Record<string, string> {
    return { error: this.error, error_description: this.message }
  }
}

export class InvalidRequest extends OAuthError {
  constructor(description: string) {
    super(400, 'invalid_request', description)
  }
}

/** 401; when the client tried HTTP Basic, RFC 6749 5.2 asks for a matching challenge. */
export class InvalidClient extends OAuthError {
  constructor(description: string, basicTried = false) {
    super(401, 'invalid_client', description, basicTried ? { 'www-authenticate': 'Basic realm="oauth"' } : {})
  }
}

export class InvalidGrant extends OAuthError {
  constructor(description: string) {
    super(400, 'invalid_grant', description)
  }
}

export class UnauthorizedClient extends OAuthError {
  constructor(description: string, statusCode = 400) {
    super(statusCode, 'unauthorized_client', description)
  }
}

export class UnsupportedGrantType extends OAuthError {
  constructor(description: string) {
    super(400, 'unsupported_grant_type', description)
  }
}

export class UnsupportedResponseType extends OAuthError {
  constructor(description: string) {
    super(400, 'unsupported_response_type', description)
  }
}

export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super(400, 'invalid_scope', description)
  }
}

export class AccessDenied extends OAuthError {
  constructor(description = 'The resource owner or authorization server denied the request.') {
    super(403, 'access_denied', description)
  }
}

/** RFC 8628 3.5: the person has not decided yet; poll again after the interval. */
export class AuthorizationPending extends OAuthError {
  constructor() {
    super(400, 'authorization_pending', 'The user has not yet completed authorization at the verification page.')
  }
}

/** RFC 8628 3.5: polled before the interval passed; the interval grows by 5 seconds. */
export class SlowDown extends OAuthError {
  constructor(interval: number) {
    super(400, 'slow_down', `Polling too fast: wait ${interval} seconds between requests.`)
  }
}

/** RFC 8628 3.5: the device code expired before it was approved. */
export class ExpiredToken extends OAuthError {
  constructor() {
    super(400, 'expired_token', 'The device code has expired: start the device authorization again.')
  }
}

/** RFC 8628 3.5: the person denied the device; at the token endpoint a 400 (RFC 6749 5.2). */
export class DeviceAccessDenied extends OAuthError {
  constructor() {
    super(400, 'access_denied', 'The user denied the authorization request.')
  }
}

export class ServerError extends OAuthError {
  constructor(description = 'The server encountered an unexpected condition.') {
    super(500, 'server_error', description)
  }
}

/**
 * Too many failed sign-ins or password grants: 429 with `Retry-After`. RFC 6749 has no code
 * for throttling; `temporarily_unavailable` is the closest and clients treat it as retryable.
 */
export class TemporarilyUnavailable extends OAuthError {
  constructor(description: string, retryAfterSeconds: number) {
    super(429, 'temporarily_unavailable', description, { 'retry-after': String(retryAfterSeconds) })
  }
}

/** RFC 9449 5 and 8: a DPoP proof refused where tokens are issued (400), with the nonce to use when that was why. */
export class DpopProofRefused extends OAuthError {
  constructor(error: DpopProofError) {
    super(400, error.code, error.message, error.nonce ? { 'dpop-nonce': error.nonce } : {})
  }
}

/**
 * RFC 9449 7.1 and 9: a request to a resource refused over DPoP (a proof refused, a bound token
 * sent without its proof, a proof of another key): 401 with a DPoP challenge naming the error.
 */
export class DpopTokenRefused extends OAuthError {
  constructor(error: string, description: string, nonce?: string) {
    super(401, error, description, {
      'www-authenticate': dpopChallenge({ code: error, description }),
      ...(nonce ? { 'dpop-nonce': nonce } : {}),
    })
  }

  static of(error: DpopProofError): DpopTokenRefused {
    return new DpopTokenRefused(error.code, error.message, error.nonce)
  }
}

const REALM = 'Protected by OAuth 2'

function challenge(params: Record<string, string>): string {
  const parts = Object.entries(params).map(([k, v]) => `${k}="${v.replace(/["\\]/g, '')}"`)
  return `Bearer ${[`realm="${REALM}"`, ...parts].join(', ')}`
}

/** RFC 6750 3.1: a bearer token that is unknown, expired or revoked. */
export class InvalidToken extends OAuthError {
  constructor(description: string) {
    super(401, 'invalid_token', description, {
      'www-authenticate': challenge({ error: 'invalid_token', error_description: description }),
    })
  }
}

/**
 * GET /oauth/token/info with a missing or unusable token: GitLab's Oauth::TokenInfoController
 * answers Doorkeeper's 400 invalid_request. The challenge carries the error only when a token
 * was sent (RFC 6750 3.1: a request without credentials gets no error code).
 */
export class TokenInfoRefused extends OAuthError {
  constructor(tokenSent: boolean) {
    const description =
      'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.'
    super(400, 'invalid_request', description, {
      'www-authenticate': challenge(tokenSent ? { error: 'invalid_request', error_description: description } : {}),
    })
  }
}

/** RFC 6750 3.1: a valid token without the scope the route needs; `scope` names what would do. */
export class InsufficientScope extends OAuthError {
  readonly scope: string

  constructor(scope: string) {
    const description = 'The request requires higher privileges than provided by the access token.'
    super(403, 'insufficient_scope', description, {
      'www-authenticate': challenge({ error: 'insufficient_scope', error_description: description, scope }),
    })
    this.scope = scope
  }

  override body(): Record<string, unknown> {
    return { ...super.body(), scope: this.scope }
  }
}

/** GitLab's API error body: `{"message": "404 Not Found"}`. */
export class ApiError extends HttpError {
  override body(): unknown {
    return { message: this.message }
  }
}

/** A parameter GitLab's API refuses by its own check (not its schema): `{"error": "..."}`, as Grape renders it. */
export class ApiParameterError extends HttpError {
  constructor(message: string) {
    super(400, message)
  }

  override body(): unknown {
    return { error: this.message }
  }
}

/** No credentials at all on an /api/v4 route (GitLab's body, RFC 6750 3.1 challenge without error). */
export class Unauthenticated extends ApiError {
  constructor() {
    super(401, '401 Unauthorized', { headers: { 'www-authenticate': challenge({}) } })
  }
}

export const oauthErrors: ErrorFormat = {
  validation: (issues) =>
    new InvalidRequest(issues.map((i) => `${String(i.loc[i.loc.length - 1])}: ${i.msg}`).join('; ')),
  notFound: () => new ApiError(404, '404 Not Found'),
  clientError: (status, message) => new OAuthError(status, 'invalid_request', message),
  internal: () => new ServerError(),
}
