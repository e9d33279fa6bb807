import type { FastifyReply, FastifyRequest } from 'fastify'
import { isHttpsIssuer, type OAuthSettings } from './config.ts'

/** Two years; no includeSubDomains: the issuer's host speaks for itself, not for its siblings. */
const HSTS_MAX_AGE = 63_072_000
/** Answers with personal data or a token's effects. */
const PRIVATE_PATHS = ['/api/v4/', '/oauth/userinfo']
/** GitLab's API (Grape) sends this exact type, without a charset; python-gitlab compares it whole. */
export const API_JSON = 'application/json'

/**
 * Route option of every /api/v4 route: its answers, errors included, go out as `API_JSON`.
 * Fastify appends `; charset=utf-8` to any JSON type it serialises, so the type is set again
 * once the body is made (JSON is UTF-8 by definition, RFC 8259).
 */
export const GITLAB_JSON = {
  onSend: (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, p: unknown) => void) => {
    // a 204 has no body to type
    if (reply.statusCode !== 204) reply.header('content-type', API_JSON)
    done(null, payload)
  },
} as const

/** The headers every answer of a path carries, errors included (the platform's `pathHeaders`). */
export function oauthPathHeaders(
  settings: OAuthSettings,
): (path: string) => Readonly<Record<string, string>> | undefined {
  // RFC 6797: a browser that reached the https issuer once never falls back to plain http
  const everywhere = isHttpsIssuer(settings) ? { 'strict-transport-security': `max-age=${HSTS_MAX_AGE}` } : undefined
  // no shared or browser cache keeps these answers, errors included
  const personal = { ...everywhere, 'cache-control': 'no-store' }
  return (path) => (PRIVATE_PATHS.some((prefix) => path.startsWith(prefix)) ? personal : everywhere)
}
