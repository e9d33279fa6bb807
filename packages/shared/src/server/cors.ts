import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/**
 * Who may read a path's answers from another origin. Never with credentials: a cross-origin
 * caller brings its token or key in a header, and no page's session cookie goes along.
 */
export interface CorsPolicy {
  /** `*` (any origin), or the exact origins allowed (`https://grafana.example.org`). */
  origins: '*' | readonly string[]
  /** Methods a preflight allows (OPTIONS is implied). */
  methods: readonly string[]
  /** Request headers a preflight allows; absent: whatever the preflight asks for. */
  allowedHeaders?: readonly string[]
  /** Response headers a script may read beyond the safelisted ones. */
  exposedHeaders?: readonly string[]
}

/**
 * The policy of a path (no query string), or undefined: no CORS, and OPTIONS is 404 there.
 * Return the same object for the same policy: its headers are worked out once per object.
 */
export type CorsPolicies = (path: string) => CorsPolicy | undefined

/** How long a browser may keep a preflight's answer (rack-cors' default, as GitLab answers). */
const PREFLIGHT_MAX_AGE = '7200'

/** A policy's headers, worked out once. */
interface Compiled {
  /** On every answer of the path: `*`, or nothing (the origin is named back when allowed). */
  anyOrigin: boolean
  allowed: ReadonlySet<string>
  exposed: string | undefined
  methods: string
  allowedHeaders: string | undefined
}

function compile(policy: CorsPolicy): Compiled {
  return {
    anyOrigin: policy.origins === '*' || policy.origins.includes('*'),
    allowed: new Set(policy.origins === '*' ? [] : policy.origins),
    exposed: policy.exposedHeaders?.length ? policy.exposedHeaders.join(', ') : undefined,
    methods: [...policy.methods, 'OPTIONS'].join(', '),
    allowedHeaders: policy.allowedHeaders?.join(', '),
  }
}

/** Adds `name` to the answer's Vary list, after what is there (CORS, compression, negotiation). */
export function addVary(reply: FastifyReply, name: string): void {
  const earlier = reply.getHeader('vary')
  reply.header('vary', typeof earlier === 'string' && earlier !== '' ? `${earlier}, ${name}` : name)
}

/** A request's path, without its query string. */
export const pathOf = (url: string): string => {
  const q = url.indexOf('?')
  return q < 0 ? url : url.slice(0, q)
}

/**
 * Sets the CORS headers of a request's answer by its path; true when the request was a
 * preflight, answered here (the caller then ends its hook without going on).
 */
export type CorsStep = (request: FastifyRequest, reply: FastifyReply, path: string) => boolean

/**
 * Answers CORS by path, preflights included (the Fetch standard's CORS protocol, as rack-cors
 * answers it for GitLab), as a step of the platform's one onRequest hook. Hand-written rather
 * than @fastify/cors: with per-path policies that plugin re-normalises its options and marks
 * `Vary: Origin` on every answer, which then had to be taken off again where any origin is
 * allowed; together a sixth of the cost of a cached `GET /api/v4/user` (see docs/PERFORMANCE.md).
 */
export function corsStep(policies: CorsPolicies): CorsStep {
  const compiled = new WeakMap<CorsPolicy, Compiled>()
  return (request, reply, path) => {
    const policy = policies(path)
    if (!policy) return false
    let cors = compiled.get(policy)
    if (!cors) {
      cors = compile(policy)
      compiled.set(policy, cors)
    }
    let allowOrigin: string | undefined
    if (cors.anyOrigin) allowOrigin = '*'
    else {
      // the answer names one origin or none: a shared cache must keep one copy per Origin
      addVary(reply, 'Origin')
      const origin = request.headers.origin
      if (origin !== undefined && cors.allowed.has(origin)) allowOrigin = origin
    }
    // an origin not allowed gets no allow-origin, so its browser keeps the answer from its script
    if (allowOrigin !== undefined) reply.header('access-control-allow-origin', allowOrigin)
    if (cors.exposed) reply.header('access-control-expose-headers', cors.exposed)
    // a preflight (or a bare OPTIONS, answered alike) ends here, before any authentication
    if (request.method !== 'OPTIONS') return false
    reply.header('access-control-allow-methods', cors.methods)
    if (cors.allowedHeaders !== undefined) reply.header('access-control-allow-headers', cors.allowedHeaders)
    else {
      addVary(reply, 'Access-Control-Request-Headers')
      const asked = request.headers['access-control-request-headers']
      if (asked !== undefined) reply.header('access-control-allow-headers', asked)
    }
    reply.header('access-control-max-age', PREFLIGHT_MAX_AGE).header('content-length', '0').code(204).send()
    return true
  }
}

/** OPTIONS reaches a route only where no policy answered it: no CORS there, a 404. */
export function registerUnansweredOptions(app: FastifyInstance): void {
  app.options('*', { schema: { hide: true } }, (_request, reply) => reply.callNotFound())
}
