/**
 * The one error model: anything a handler throws to answer with a 4xx/5xx is an HttpError.
 * Each service subclasses it for the body shape its clients expect (FastAPI's `detail`,
 * RFC 6749's `error`, GitLab's `message`); the shared error handler only calls `body()`.
 */
export class HttpError extends Error {
  override name = 'HttpError'
  readonly statusCode: number
  readonly headers: Readonly<Record<string, string>>

  constructor(
    statusCode: number,
    message: string,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause })
    this.statusCode = statusCode
    this.headers = options.headers ?? {}
  }

  /** The response body. */
  body(): unknown {
    return { message: this.message }
  }
}

/** One failed check of a request part, in the terms FastAPI uses (`loc`, `msg`, `type`). */
export interface ValidationIssue {
  readonly loc: ReadonlyArray<string | number>
  readonly msg: string
  readonly type: string
}

/** How a service words the errors the framework raises before its handlers run. */
export interface ErrorFormat {
  /** A request part failed its schema. */
  validation(issues: ValidationIssue[]): HttpError
  /** No route matched. */
  notFound(method: string, url: string): HttpError
  /** The framework refused the request (malformed JSON, unsupported media type, body too large...). */
  clientError(statusCode: number, message: string): HttpError
  /** Anything unexpected: the body never carries the cause, the log does. */
  internal(): HttpError
}
