import { createHash } from 'node:crypto'
import { addVary } from '@campus/shared'
import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * HTTP caching of the public views (charts, reports, dashboard): a strong ETag from the body,
 * `Cache-Control: public` for a few minutes (the data moves every 15 minutes) and 304 for a
 * matching `If-None-Match`. Public endpoints lean on this, and on the rate limit, instead of a key.
 */

/** Seconds a view stays fresh: a third of the 15-minute feed period. */
export const VIEW_MAX_AGE = 300

export const strongEtag = (body: string | Buffer): string =>
  `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`

/** RFC 9110: If-None-Match compares weakly, lists are comma-separated, `*` matches any. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false
  const opaque = etag.replace(/^W\//, '')
  return header.split(',').some((candidate) => {
    const tag = candidate.trim()
    return tag === '*' || tag.replace(/^W\//, '') === opaque
  })
}

/** Sends `body` with its validators, or an empty 304 when the client already holds it. */
export function sendCached(
  request: FastifyRequest,
  reply: FastifyReply,
  body: string | Buffer,
  contentType: string,
  options: { maxAge?: number; vary?: string } = {},
): FastifyReply {
  const etag = strongEtag(body)
  reply.header('etag', etag)
  reply.header('cache-control', `public, max-age=${options.maxAge ?? VIEW_MAX_AGE}`)
  // added to what is there (CORS varies by Origin): a shared cache must tell all of them apart
  if (options.vary) addVary(reply, options.vary)
  if (matchesIfNoneMatch(request.headers['if-none-match'], etag)) {
    return reply.code(304).send()
  }
  return reply.code(200).type(contentType).send(body)
}
