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

/** Form fields arrive as strings; a repeated field arrives as a list and is treated as absent. */
export function field(body: unknown, name: string): string | undefined {
  const value = (body as Record<string, unknown> | undefined)?.[name]
  return typeof value === 'string' ? value : undefined
}

/** Only local pages may be returned to after sign-in: never an open redirect. */
export function safeReturnTo(value: string | undefined): string {
  if (!value) return '/profile'
  const allowed =
    value.startsWith('/oauth/authorize?') ||
    value === '/profile' ||
    value.startsWith('/profile/') ||
    value.startsWith('/admin/')
  return allowed && !value.includes('\\') && !/[\r\n]/.test(value) ? value : '/profile'
}
