import { type ErrorFormat, HttpError, type ValidationIssue } from '@campus/shared'

/** FastAPI's error body: `{"detail": "..."}`. */
export class DetailError extends HttpError {
  override body(): unknown {
    return { detail: this.message }
  }
}

/** FastAPI's 422: `{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}`. */
export class UnprocessableEntity extends HttpError {
  readonly issues: ValidationIssue[]

  constructor(issues: ValidationIssue[]) {
    super(422, issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '))
    this.issues = issues
  }

  override body(): unknown {
    return { detail: this.issues }
  }
}

export const energyErrors: ErrorFormat = {
  validation: (issues) => new UnprocessableEntity(issues),
  notFound: () => new DetailError(404, 'Not Found'),
  clientError: (status, message) => new DetailError(status, message),
  internal: () => new DetailError(500, 'Internal Server Error'),
}
