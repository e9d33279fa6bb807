import Type from 'typebox'

/** Response schemas of the HTML pages (documented in the OpenAPI document as text/html). */
export const HtmlPage = (description: string) => ({
  description,
  content: { 'text/html': { schema: Type.String() } },
})

export const Redirect = (description: string) => ({
  description,
  headers: { location: Type.String() },
  content: { 'text/html': { schema: Type.String() } },
})
