import fp from 'fastify-plugin'
import { OAuthErrorBody } from '../schemas/oauth.ts'

const MALFORMED = { ...OAuthErrorBody, description: 'invalid_request: a malformed URL, parameter or body' }
const TOO_LARGE = { ...OAuthErrorBody, description: 'invalid_request: the body exceeds the size limit' }
const UNSUPPORTED = {
  ...OAuthErrorBody,
  description: 'invalid_request: a body of a content type the route does not take',
}

/**
 * Fastify itself refuses some requests before a handler runs (an undecodable URL or query,
 * a body too large or of a foreign content type); the error handler answers them as RFC 6749
 * `invalid_request`. This documents those answers on every route that does not already.
 * Register before the routes: onRoute sees only routes added after it.
 */
export const frameworkResponsesPlugin = fp(
  async (app) => {
    app.addHook('onRoute', (route) => {
      const schema = route.schema
      if (!schema || (schema as { hide?: boolean }).hide) return
      const response = (schema.response ?? {}) as Record<string, unknown>
      const methods = Array.isArray(route.method) ? route.method : [route.method]
      response['400'] ??= MALFORMED
      // Fastify reads a body on every method but GET and HEAD: a DELETE may carry one too
      if (methods.some((m) => m !== 'GET' && m !== 'HEAD')) {
        response['413'] ??= TOO_LARGE
        response['415'] ??= UNSUPPORTED
      }
      schema.response = response
    })
  },
  { name: 'oauth-framework-responses' },
)
