import { randomUUID } from 'node:crypto'
import { type Database, readMigrations, registerPlatform, serverOptions } from '@campus/shared'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { type CacheListener, listenForCacheChanges, notifyCacheChange } from './cache-invalidation.ts'
import { defaultSettings, isHttpsIssuer, type OAuthSettings } from './config.ts'
import type { CachedToken, ServerContext } from './context.ts'
import type { Application, OAuthDB } from './db/schema.ts'
import { oauthErrors } from './errors.ts'
import { OpenIdKeys } from './openid.ts'
import { SCRIPT, SCRIPT_PATH, STYLESHEET, STYLESHEET_PATH } from './pages/layout.ts'
import { documentFrameworkResponses } from './plugins/framework-responses.ts'
import { refuseNulCharacters } from './plugins/text-parameters.ts'
import { deleteExpiredAuthorizationCodes } from './repositories/codes.ts'
import { deleteExpiredSessions } from './repositories/sessions.ts'
import { adminPageRoutes } from './routes/admin-pages.ts'
import { apiRoutes } from './routes/api/index.ts'
import { authorizeRoutes } from './routes/authorize.ts'
import { metadataRoutes } from './routes/metadata.ts'
import { openidRoutes, USERINFO_PATH } from './routes/openid.ts'
import { profileApplicationRoutes } from './routes/profile-applications.ts'
import { profileTokenRoutes } from './routes/profile-tokens.ts'
import { profileTwoFactorRoutes } from './routes/profile-two-factor.ts'
import { revokeIntrospectRoutes } from './routes/revoke-introspect.ts'
import { signInRoutes } from './routes/sign-in.ts'
import { signUpRoutes } from './routes/sign-up.ts'
import { tokenRoutes } from './routes/token.ts'
import { tokenInfoRoutes } from './routes/token-info.ts'
import { oauthService } from './service.ts'
import { createThrottle, type Throttle } from './throttle.ts'
import { TtlCache } from './token-cache.ts'

const SWEEP_INTERVAL_MS = 10 * 60_000
/** Two years; no includeSubDomains: the issuer's host speaks for itself, not for its siblings. */
const HSTS_MAX_AGE = 63_072_000
/** How long a change waits to hear its own notification back before answering anyway. */
const ECHO_TIMEOUT_MS = 1000

export interface OAuthAppOptions {
  database: Database<OAuthDB>
  logLevel?: string
  /** Read on every request, so a test may set the issuer once it knows its port. */
  settings?: OAuthSettings
  throttle?: Throttle
  /**
   * Hear other instances' changes through LISTEN/NOTIFY (see cache-invalidation.ts). Default:
   * on, except on embedded PGlite, which one process serves alone.
   */
  crossInstanceInvalidation?: boolean
}

function isEmbedded(database: Database<OAuthDB>): boolean {
  const described = database as { embedded?: boolean; kind?: string }
  return described.embedded === true || described.kind === 'pglite'
}

/** The authorization server as a Fastify instance, not listening. */
export async function buildApp(options: OAuthAppOptions): Promise<FastifyInstance> {
  const settings = options.settings ?? defaultSettings()
  const app = Fastify(
    serverOptions('oauth-server', options.logLevel ?? 'silent', oauthErrors, {
      trustedProxies: settings.trustedProxies,
    }),
  ).withTypeProvider<TypeBoxTypeProvider>()
  const throttle = options.throttle ?? createThrottle(settings.throttle, settings.redisUrl, settings.redisPrefix)
  const db = options.database.db
  const tokenCache = new TtlCache<CachedToken>(settings.tokenCacheSeconds)
  const clientCache = new TtlCache<Application>(settings.tokenCacheSeconds, 1000)
  let listener: CacheListener | undefined
  const crossInstance =
    settings.tokenCacheSeconds > 0 && (options.crossInstanceInvalidation ?? !isEmbedded(options.database))
  const context: ServerContext = {
    db,
    settings,
    throttle,
    tokenCache,
    clientCache,
    async commitChange(work) {
      const id = randomUUID()
      const heard = listener?.heard(id, ECHO_TIMEOUT_MS)
      const result = await db.transaction().execute(async (trx) => {
        const value = await work(trx)
        if (crossInstance) await notifyCacheChange(trx, id)
        return value
      })
      // after commit: a lookup racing the transaction may have cached what it changed
      tokenCache.clear()
      clientCache.clear()
      await heard
      return result
    },
    syncCaches: () => (settings.cacheSync && listener ? listener.sync() : Promise.resolve()),
    openid: new OpenIdKeys(db, settings.secretKey),
  }
  app.addHook('onClose', async () => throttle.close())
  if (crossInstance) {
    // nothing is cached until the listener is up: a change made elsewhere must never go unheard
    tokenCache.disable()
    clientCache.disable()
    listener = listenForCacheChanges(options.database.pool, {
      changed: () => {
        tokenCache.clear()
        clientCache.clear()
      },
      listening: () => {
        tokenCache.enable()
        clientCache.enable()
      },
      lost: (error) => {
        tokenCache.disable()
        clientCache.disable()
        app.log.warn({ err: error }, 'cache invalidation channel lost; caching off until it is back')
      },
    })
    const listening = listener
    // preClose: the pool's own onClose (added by whoever owns it) waits for this connection
    app.addHook('preClose', async () => listening.close())
  }
  // expired sessions and codes are swept now and then; any instance may do it
  const sweep = setInterval(() => {
    deleteExpiredSessions(context.db)
      .then(() => deleteExpiredAuthorizationCodes(context.db))
      .catch((error: unknown) => app.log.warn({ err: error }, 'sweeping expired sessions and codes failed'))
  }, SWEEP_INTERVAL_MS)
  sweep.unref()
  app.addHook('onClose', async () => clearInterval(sweep))

  app.addHook('onRequest', async (request, reply) => {
    // RFC 6797: a browser that reached the https issuer once never falls back to plain http
    if (isHttpsIssuer(settings)) reply.header('strict-transport-security', `max-age=${HSTS_MAX_AGE}`)
    // personal data and tokens' effects: no shared or browser cache keeps an API answer, errors included
    if (request.url.startsWith('/api/v4/') || request.url.startsWith(USERINFO_PATH)) {
      reply.header('cache-control', 'no-store')
    }
  })
  documentFrameworkResponses(app)
  refuseNulCharacters(app)
  await registerPlatform(app, {
    service: 'oauth-server',
    errors: oauthErrors,
    db,
    migrations: readMigrations(oauthService.migrationsDir),
    metricsToken: settings.metricsToken,
    openapi: {
      info: {
        title: 'OAuth 2.0 authorization server',
        version: '1.0.0',
        description:
          'Authorization code (PKCE), implicit, password and refresh flows, and the /api/v4 surface. Bad, expired or revoked tokens get RFC 6750 401 invalid_token at /api/v4 and, as GitLab answers there, 400 invalid_request at /oauth/token/info.',
      },
      tags: [
        { name: 'OAuth', description: 'RFC 6749 endpoints and their extensions' },
        { name: 'API', description: 'GitLab-compatible /api/v4 routes' },
        { name: 'Pages', description: 'Server-rendered pages: sign-in, account, applications, tokens, administration' },
      ],
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'OAuth access token or personal access token' },
        accessTokenQuery: { type: 'apiKey', in: 'query', name: 'access_token' },
        bearerTokenQuery: { type: 'apiKey', in: 'query', name: 'bearer_token' },
        privateToken: { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' },
      },
    },
  })
  await app.register(cookie)
  // repeated parameters arrive as arrays and are refused where RFC 6749 3.1 / 3.2 asks
  await app.register(formbody)

  app.get(STYLESHEET_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('content-type', 'text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(STYLESHEET),
  )
  app.get(SCRIPT_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .header('x-content-type-options', 'nosniff')
      .send(SCRIPT),
  )
  metadataRoutes(app, context)
  openidRoutes(app, context)
  authorizeRoutes(app, context)
  signInRoutes(app, context)
  signUpRoutes(app, context)
  profileApplicationRoutes(app, context)
  profileTokenRoutes(app, context)
  profileTwoFactorRoutes(app, context)
  adminPageRoutes(app, context)
  tokenRoutes(app, context)
  tokenInfoRoutes(app, context)
  revokeIntrospectRoutes(app, context)
  apiRoutes(app, context)
  return app
}
