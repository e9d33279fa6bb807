import { type ErrorFormat, HttpError } from '@campus/shared'

/** RFC 6749 section 5.2 error body: `{"error": "...", "error_description": "..."}`. */
export class OAuthError extends HttpError {
  readonly error: string

  constructor(statusCode: number, error: string, description: string, headers?: Record<string, string>) {
    super(statusCode, description, { headers: { 'cache-control': 'no-store', pragma: 'no-cache', ...headers } })
    this.error = error
  }

  override body(): unknown {
    return { error: this.error, error_description: this.message }
  }
}

/** GitLab's API error body: `{"message": "404 Not Found"}`. */
export class ApiError extends HttpError {
  override body(): unknown {
    return { message: this.message }
  }
}

export const oauthErrors: ErrorFormat = {
  validation: (issues) =>
    new OAuthError(
      400,
      'invalid_request',
      issues.map((i) => `${String(i.loc[i.loc.length - 1])}: ${i.msg}`).join('; '),
    ),
  notFound: () => new ApiError(404, '404 Not Found'),
  clientError: (status, message) => new OAuthError(status, 'invalid_request', message),
  internal: () => new OAuthError(500, 'server_error', 'The server encountered an unexpected condition.'),
}
