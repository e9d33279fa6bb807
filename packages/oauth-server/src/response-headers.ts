import fp from 'fastify-plugin'
import { isHttpsIssuer } from '../config.ts'
import type { OAuthApp } from '../oauth-app.ts'

/** Two years; no includeSubDomains: the issuer's host speaks for itself, not for its siblings. */
const HSTS_MAX_AGE = 63_072_000
/** Answers with personal data or a token's effects. */
const PRIVATE_PATHS = ['/api/v4/', '/oauth/userinfo']

export const responseHeadersPlugin = fp(
  async (app) => {
    const { settings } = app as OAuthApp
    // a plain callback: it runs on every request (see registerPlatform)
    app.addHook('onRequest', (request, reply, done) => {
      // RFC 6797: a browser that reached the https issuer once never falls back to plain http
      if (isHttpsIssuer(settings)) reply.header('strict-transport-security', `max-age=${HSTS_MAX_AGE}`)
      // no shared or browser cache keeps these answers, errors included
      if (PRIVATE_PATHS.some((path) => request.url.startsWith(path))) reply.header('cache-control', 'no-store')
      done()
    })
  },
  { name: 'oauth-response-headers', dependencies: ['oauth-settings'] },
)
