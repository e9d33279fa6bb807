import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance } from 'fastify'

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

/** The policy of a path (no query string), or undefined: no CORS, and OPTIONS is 404 there. */
export type CorsPolicies = (path: string) => CorsPolicy | undefined

/** How long a browser may keep a preflight's answer (rack-cors' default, as GitLab answers). */
const PREFLIGHT_MAX_AGE = 7200

const NO_CORS: FastifyCorsOptions = { origin: false }

function corsOptions(policy: CorsPolicy): FastifyCorsOptions {
  return {
    origin: policy.origins === '*' ? '*' : [...policy.origins],
    credentials: false,
    methods: [...policy.methods, 'OPTIONS'],
    ...(policy.allowedHeaders ? { allowedHeaders: [...policy.allowedHeaders] } : {}),
    ...(policy.exposedHeaders ? { exposedHeaders: [...policy.exposedHeaders] } : {}),
    maxAge: PREFLIGHT_MAX_AGE,
    // a bare OPTIONS (no Origin) is answered like a preflight rather than with a text body
    strictPreflight: false,
  }
}

const pathOf = (url: string) => url.split('?', 1)[0] ?? url

/** Answers CORS, preflights included, by path through @fastify/cors. */
export async function registerCors(app: FastifyInstance, policies: CorsPolicies): Promise<void> {
  await app.register(cors, {
    delegator: (request, callback) => {
      const policy = policies(pathOf(request.url))
      callback(null, policy ? corsOptions(policy) : NO_CORS)
    },
  })
  // @fastify/cors marks every answer it delegates `Vary: Origin`; only a list of origins makes an
  // answer depend on Origin (`*` and no CORS answer every origin alike), so caches keep one copy
  app.addHook('onSend', async (request, reply, payload) => {
    const origins = policies(pathOf(request.url))?.origins
    if (origins !== undefined && origins !== '*') return payload
    const vary = reply.getHeader('vary')
    if (typeof vary !== 'string') return payload
    const rest = vary
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '' && name.toLowerCase() !== 'origin')
    if (rest.length) reply.header('vary', rest.join(', '))
    else reply.removeHeader('vary')
    return payload
  })
}
