import type { FastifyRequest } from 'fastify'

/**
 * A preValidation hook: GitLab's API reads a request's attributes from the query string as well as
 * from a form or JSON body (Grape merges them, the body winning), so the named attributes of the
 * query string are copied into the body, and validated with it as one.
 */
export function attributesFromQuery(names: readonly string[]) {
  return async (request: FastifyRequest) => {
    const query = request.query as Record<string, unknown>
    const fromQuery = Object.fromEntries(names.filter((n) => query[n] !== undefined).map((n) => [n, query[n]]))
    if (Object.keys(fromQuery).length === 0) return
    const body = request.body
    request.body = { ...fromQuery, ...(body !== null && typeof body === 'object' ? body : {}) }
  }
}
