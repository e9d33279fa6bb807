/** What every OAuth endpoint that takes a form asks of a request, and says of its answer. */
import { DpopProofError } from '@campus/shared'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { DpopProofRefused, InvalidRequest } from './errors.ts'
import type { OAuthServices } from './oauth-app.ts'

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

/**
 * The key of the DPoP proof sent to an endpoint that issues (the token endpoint) or binds (PAR)
 * what follows; undefined when the request carries no `DPoP` header. A refused proof is RFC 9449
 * 5's 400 `invalid_dpop_proof` (or `use_dpop_nonce` with the nonce). With nonces on, the answer
 * carries the nonce to use next (RFC 9449 8.2).
 */
export async function senderKey(
  request: FastifyRequest,
  reply: FastifyReply,
  services: Pick<OAuthServices, 'dpop' | 'settings'>,
  path: string,
): Promise<string | undefined> {
  const nonce = services.dpop.nonce()
  if (nonce) reply.header('dpop-nonce', nonce)
  if (request.headers.dpop === undefined) return undefined
  try {
    const proof = { proof: request.headers.dpop, method: 'POST', url: `${services.settings.issuer}${path}` }
    return (await services.dpop.verify(proof)).jkt
  } catch (error) {
    if (error instanceof DpopProofError) throw new DpopProofRefused(error)
    throw error
  }
}
