/** Request and response schemas shared by the public views: charts, reports, the dashboard, cached answers. */
import Type from 'typebox'
import { LANGUAGES } from '../charts/i18n.ts'
import { VIEW_MAX_AGE } from '../dashboard/http-cache.ts'

export const Lang = Type.Enum([...LANGUAGES], {
  title: 'Language',
  type: 'string',
  default: 'it',
  description: 'Language of titles, labels and legends: `it` (Italian, default) or `en` (English).',
})

export const ValidationErrorBody = Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
        msg: Type.String(),
        type: Type.String(),
      }),
    ),
  },
  {
    title: 'HTTPValidationError',
    description: 'A query parameter is missing, malformed or out of range (FastAPI shape).',
    examples: [{ detail: [{ loc: ['query', 'lang'], msg: "Input should be 'it', 'en'", type: 'enum' }] }],
  },
)

export const DetailBody = Type.Object(
  { detail: Type.String() },
  { description: 'Error with a message.', examples: [{ detail: 'Meter 999 not found' }] },
)

export const NotFoundBody = Type.Object(
  { detail: Type.String() },
  {
    description: 'Not Found: listed on every endpoint by the contract; answered for a path that does not exist.',
    examples: [{ detail: 'Not Found' }],
  },
)

/** Response headers of the cached views, as the OpenAPI document shows them. */
const CACHE_HEADERS = {
  etag: { type: 'string', description: 'Strong validator: a digest of the body.' },
  'cache-control': { type: 'string', description: 'public, max-age=<seconds>' },
}

/** A 200 response schema that also documents the caching headers. */
export const cached = <S extends object>(schema: S): S => ({ ...schema, headers: CACHE_HEADERS })

export const NotModified = Type.Null({
  description:
    'Not Modified: the `If-None-Match` header names the current `ETag`; the body is empty and the cached copy stays valid.',
  headers: { etag: CACHE_HEADERS.etag },
})

export const CACHING_NOTE =
  `Public (no \`x-api-key\`). Cached over HTTP: a strong \`ETag\` computed from the body, ` +
  `\`Cache-Control: public, max-age=${VIEW_MAX_AGE}\` (the data moves every 15 minutes), and \`304\` with an ` +
  'empty body when `If-None-Match` names the current ETag.'
