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

/** A `{"detail": ...}` answer of one status, its example what that status says. */
export const detailResponse = (description: string, example: string) => ({
  ...DetailResponse,
  description,
  examples: [{ detail: example }],
})

export const NotFoundResponse = detailResponse('Not Found', 'Not Found')
export const RateLimitedResponse = detailResponse(
  'Too many requests; see Retry-After',
  'Rate limit exceeded: at most 600 requests a minute, retry in 1 minute',
)

/** An API key and a different bearer token in one request: which one speaks for the caller is not for the service to guess. */
export const TWO_CREDENTIALS = 'Send one credential: x-api-key or Authorization: Bearer, not two different ones'

/** The error responses of a route guarded by an API key. */
export const keyErrorResponses = {
  400: detailResponse('An API key and a different bearer token were sent', TWO_CREDENTIALS),
  401: detailResponse('Missing, unknown, expired or revoked API key or access token', 'Invalid API key'),
  403: detailResponse(
    'The API key may not call this endpoint, or the access token lacks read_energy',
    'This API key may not call this endpoint',
  ),
  404: NotFoundResponse,
  429: RateLimitedResponse,
  503: detailResponse(
    'The OAuth server cannot be reached to check an access token; see Retry-After',
    'The OAuth server cannot be reached to check the token; retry later',
  ),
}
