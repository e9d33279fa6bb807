import Type from 'typebox'

/** `{"detail": "..."}`: 401, 403, 404, 429. */
export const DetailResponse = Type.Object(
  { detail: Type.String() },
  { title: 'HTTPError', examples: [{ detail: 'Not Found' }] },
)

const ValidationError = Type.Object(
  {
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
    msg: Type.String(),
    type: Type.String(),
  },
  { title: 'ValidationError' },
)

/** FastAPI's 422 body. */
export const HTTPValidationError = Type.Object(
  { detail: Type.Array(ValidationError) },
  {
    title: 'HTTPValidationError',
    examples: [
      {
        detail: [
          {
            loc: ['query', 'start_datetime'],
            msg: 'Input should be a valid datetime (YYYY-MM-DD hh:mm:ss in UTC, or ISO 8601 with an offset)',
            type: 'datetime_parsing',
          },
        ],
      },
    ],
  },
)

/** The error responses of a route guarded by an API key. */
export const keyErrorResponses = {
  400: { ...DetailResponse, description: 'Both an API key and a bearer token were sent' },
  401: { ...DetailResponse, description: 'Missing, unknown, expired or revoked API key or access token' },
  403: {
    ...DetailResponse,
    description: 'The API key may not call this endpoint, or the access token lacks read_energy',
  },
  404: { ...DetailResponse, description: 'Not Found' },
  429: { ...DetailResponse, description: 'Too many requests; see Retry-After' },
  503: {
    ...DetailResponse,
    description: 'The OAuth server cannot be reached to check an access token; see Retry-After',
  },
}
