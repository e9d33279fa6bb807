/**
 * GitLab's offset pagination (lib/api/concerns/pagination_params.rb,
 * lib/gitlab/pagination/offset_header_builder.rb): `page` from 1, `per_page` 20 by default and at
 * most 100 (Kaminari's max_per_page); a page or per_page below 1 is 400. Every list answers with
 * X-Page, X-Per-Page, X-Next-Page, X-Prev-Page (empty when there is none), X-Total,
 * X-Total-Pages (at least 1) and a Link header of prev, next, first and last.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import Type from 'typebox'
import { ApiParameterError } from './errors.ts'
import { TokenQuery } from './schemas/api.ts'

export const DEFAULT_PER_PAGE = 20
export const MAX_PER_PAGE = 100

/** The query parameters, as GitLab declares them (integers; checked for range by `pageOf`). */
export const PaginationQuery = {
  page: Type.Optional(Type.Integer({ default: 1, description: 'Current page number (from 1)' })),
  per_page: Type.Optional(
    Type.Integer({ default: DEFAULT_PER_PAGE, description: `Items per page (at most ${MAX_PER_PAGE})` }),
  ),
}

/** Where a token may come in the query string. */
const TOKEN_PARAMETERS = Object.keys(TokenQuery.properties)

export interface Page {
  page: number
  perPage: number
  offset: number
}

/** The page asked for: 400 as GitLab answers it for a page or per_page below 1. */
export function pageOf(query: { page?: number | undefined; per_page?: number | undefined }): Page {
  const page = query.page ?? 1
  const asked = query.per_page ?? DEFAULT_PER_PAGE
  if (page < 1) throw new ApiParameterError('page does not have a valid value')
  if (asked < 1) throw new ApiParameterError('per_page does not have a valid value')
  const perPage = Math.min(asked, MAX_PER_PAGE)
  return { page, perPage, offset: (page - 1) * perPage }
}

/**
 * Sets GitLab's pagination headers for `page` of a list of `total` items. The links are built on
 * `base` (the issuer), as GitLab builds them on its configured host, never on the Host header,
 * and carry the request's parameters but a token.
 */
export function paginationHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  base: string,
  page: Page,
  total: number,
): void {
  const totalPages = Math.max(1, Math.ceil(total / page.perPage))
  const next = page.page < totalPages ? page.page + 1 : undefined
  const prev = page.page > 1 ? Math.min(page.page - 1, totalPages) : undefined
  const url = new URL(`${base}${request.url}`)
  // a token sent in the query string stays out of the links (they end up in clients' logs)
  for (const name of TOKEN_PARAMETERS) url.searchParams.delete(name)
  const href = (n: number) => {
    url.searchParams.set('page', String(n))
    url.searchParams.set('per_page', String(page.perPage))
    return `<${url.toString()}>`
  }
  const links = [
    ...(prev ? [`${href(prev)}; rel="prev"`] : []),
    ...(next ? [`${href(next)}; rel="next"`] : []),
    `${href(1)}; rel="first"`,
    `${href(totalPages)}; rel="last"`,
  ]
  reply.headers({
    'x-page': String(page.page),
    'x-per-page': String(page.perPage),
    'x-next-page': next ? String(next) : '',
    'x-prev-page': prev ? String(prev) : '',
    'x-total': String(total),
    'x-total-pages': String(totalPages),
    link: links.join(', '),
  })
}
