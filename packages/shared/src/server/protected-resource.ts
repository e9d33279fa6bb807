/**
 * OAuth 2.0 protected resource metadata (RFC 9728): what a resource tells a client that knows
 * only its URL, above all which authorization server issues its tokens. Every service that takes
 * the OAuth server's tokens serves it at one path, in one shape, and names it in the challenge of
 * each 401 it answers (RFC 9728 5.1), so a client such as an MCP agent finds its way from there.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import Type, { type Static } from 'typebox'
import { DPOP_ALGORITHMS } from '../dpop/proof.ts'

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource'

export const ProtectedResourceMetadata = Type.Object(
  {
    resource: Type.String({ description: 'The resource identifier: the URL the metadata was formed from' }),
    authorization_servers: Type.Array(Type.String(), { description: 'Issuers whose tokens this resource takes' }),
    scopes_supported: Type.Array(Type.String()),
    bearer_methods_supported: Type.Array(Type.String(), { description: 'header, query' }),
    dpop_signing_alg_values_supported: Type.Array(Type.String(), { description: 'RFC 9449 proofs taken' }),
    dpop_bound_access_tokens_required: Type.Boolean(),
    resource_name: Type.String(),
    resource_documentation: Type.String(),
  },
  { description: 'RFC 9728 2' },
)

export type ProtectedResourceMetadata = Static<typeof ProtectedResourceMetadata>

export function protectedResourceMetadata(input: {
  resource: string
  issuer: string
  scopes: readonly string[]
  bearerMethods: readonly string[]
  name: string
}): ProtectedResourceMetadata {
  return {
    resource: input.resource,
    authorization_servers: [input.issuer],
    scopes_supported: [...input.scopes],
    bearer_methods_supported: [...input.bearerMethods],
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    dpop_bound_access_tokens_required: false,
    resource_name: input.name,
    resource_documentation: `${input.resource}/docs`,
  }
}

/** Where one challenge of a `WWW-Authenticate` list ends and the next, of a scheme these services send, begins. */
const CHALLENGES = /,\s*(?=(?:APIKey|Basic|Bearer|DPoP)(?:\s|,|$))/

/**
 * An `onSend` hook naming the metadata in every Bearer or DPoP challenge of a 401 (RFC 9728 5.1):
 * `resource` gives the resource identifier of the request's service.
 */
export function announceResourceMetadata(resource: (request: FastifyRequest) => string) {
  return (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (e: null, p: unknown) => void) => {
    const challenge = reply.statusCode === 401 ? reply.getHeader('www-authenticate') : undefined
    if (typeof challenge === 'string') {
      const param = `resource_metadata="${resource(request)}${PROTECTED_RESOURCE_PATH}"`
      const named = challenge
        .split(CHALLENGES)
        .map((one) =>
          /^(Bearer|DPoP)\s*$/.test(one)
            ? `${one.trim()} ${param}`
            : /^(Bearer|DPoP)\s/.test(one)
              ? `${one}, ${param}`
              : one,
        )
        .join(', ')
      reply.header('www-authenticate', named)
    }
    done(null, payload)
  }
}
