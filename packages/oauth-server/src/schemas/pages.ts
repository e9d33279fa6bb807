import Type from 'typebox'

/** Response schemas of the HTML pages (documented in the OpenAPI document as text/html). */
export const HtmlPage = (description: string) => ({
  description,
  content: { 'text/html': { schema: Type.String() } },
})

/**
 * A redirect: the Location header and no body, as sent (a body type declared for it would not
 * match the empty answer; `type: 'null'` is @fastify/swagger's way to document none).
 */
export const Redirect = (description: string) => ({
  description,
  type: 'null',
  headers: { location: Type.String() },
})
