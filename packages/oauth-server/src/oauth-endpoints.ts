/** What every OAuth endpoint that takes a form asks of a request, and says of its answer. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { InvalidRequest } from './errors.ts'

/**
 * Route options of the endpoints whose answers are a token's or a user's few hundred bytes, under
 * compression's threshold: compressing never happens there, so its hooks would only cost.
 */
export const SMALL_ANSWERS = { compress: false } as const

/** RFC 6749 5.1: token answers are never cached. */
export function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
}

/** RFC 6749 3.2 (and RFC 7009, 7662): parameters come form-encoded in the body. */
export function requireFormBody(request: FastifyRequest): void {
  const type = request.headers['content-type'] ?? ''
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new InvalidRequest('The request body must be application/x-www-form-urlencoded.')
  }
}
