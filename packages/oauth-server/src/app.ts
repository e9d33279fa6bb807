import { readFileSync } from 'node:fs'
import {
  announceResourceMetadata,
  type Database,
  isEmbedded,
  readMigrations,
  registerPlatform,
  serverOptions,
} from '@campus/shared'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { defaultSettings, type OAuthSettings } from './config.ts'
import { oauthCorsPolicies } from './cors.ts'
import type { OAuthDB } from './db/schema.ts'
import { oauthErrors } from './errors.ts'
import { auditPlugin } from './plugins/audit.ts'
import { changesPlugin } from './plugins/changes.ts'
import { databasePlugin, tokensPurged } from './plugins/database.ts'
import { dpopPlugin } from './plugins/dpop.ts'
import { frameworkResponsesPlugin } from './plugins/framework-responses.ts'
import { openidPlugin } from './plugins/openid.ts'
import { settingsPlugin } from './plugins/settings.ts'
import { throttlePlugin } from './plugins/throttle.ts'
import { oauthPathHeaders } from './response-headers.ts'
import { adminPageRoutes } from './routes/admin-pages.ts'
import { apiRoutes } from './routes/api.ts'
import { apiApplicationRoutes } from './routes/api-applications.ts'
import { apiAuditEventRoutes } from './routes/api-audit-events.ts'
import { assetRoutes } from './routes/assets.ts'
import { authorizeRoutes } from './routes/authorize.ts'
import { deviceRoutes } from './routes/device.ts'
import { metadataRoutes } from './routes/metadata.ts'
import { openidRoutes } from './routes/openid.ts'
import { parRoutes } from './routes/par.ts'
import { profileApplicationRoutes } from './routes/profile-applications.ts'
import { profileTokenRoutes } from './routes/profile-tokens.ts'
import { profileTwoFactorRoutes } from './routes/profile-two-factor.ts'
import { registrationRoutes } from './routes/registration.ts'
import { revokeIntrospectRoutes } from './routes/revoke-introspect.ts'
import { signInRoutes } from './routes/sign-in.ts'
import { signUpRoutes } from './routes/sign-up.ts'
import { tokenRoutes } from './routes/token.ts'
import { tokenInfoRoutes } from './routes/token-info.ts'
import { OAUTH_SERVER_VERSION, oauthService } from './service.ts'
import { NUL_FREE } from './text-parameters.ts'
import type { Throttle } from './throttle.ts'

export interface OAuthAppOptions {
  database: Database<OAuthDB>
  logLevel?: string
  /** Read on every request, so a test may set the issuer once it knows its port. */
  settings?: OAuthSettings
  throttle?: Throttle
  /**
   * Hear other instances' changes through LISTEN/NOTIFY (see changes/). Default: on, except on
   * embedded PGlite, which one process serves alone.
   */
  crossInstanceInvalidation?: boolean
}

const ICON = readFileSync(new URL('./pages/icon.svg', import.meta.url), 'utf8')

/**
 * The authorization server as a Fastify instance, not listening: the platform (errors, OpenAPI,
 * health, metrics), the capability plugins that decorate the instance, then the route plugins.
 */
export async function buildApp(options: OAuthAppOptions): Promise<FastifyInstance> {
  const settings = options.settings ?? defaultSettings()
  const app = Fastify(
    serverOptions('oauth-server', options.logLevel ?? 'silent', oauthErrors, {
      trustedProxies: settings.trustedProxies,
    }),
  ).withTypeProvider<TypeBoxTypeProvider>()

  await app.register(settingsPlugin, { settings })
  const purged = tokensPurged()
  await app.register(databasePlugin, { database: options.database, settings, purged })
  await app.register(throttlePlugin, { throttle: options.throttle })
  await app.register(changesPlugin, {
    pool: options.database.pool,
    crossInstance: options.crossInstanceInvalidation ?? !isEmbedded(options.database),
  })
  await app.register(openidPlugin)
  await app.register(dpopPlugin)
  await app.register(auditPlugin)
  // before the routes: it acts on every route added after it
  await app.register(frameworkResponsesPlugin)
  await registerPlatform(app, {
    service: 'oauth-server',
    errors: oauthErrors,
    db: options.database.db,
    migrations: readMigrations(oauthService.migrationsDir),
    metricsToken: settings.metricsToken,
    metrics: [purged],
    cors: oauthCorsPolicies,
    pathHeaders: oauthPathHeaders(settings),
    parameterRules: [NUL_FREE],
    // a person starts at their applications (signed out: the sign-in page first, then back)
    frontDoor: { home: '/profile/applications', icon: ICON },
    openapi: {
      info: {
        title: 'OAuth 2.0 authorization server',
        version: OAUTH_SERVER_VERSION,
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
        dpop: {
          type: 'http',
          scheme: 'dpop',
          description: 'A DPoP-bound OAuth access token, with a DPoP proof in the `DPoP` header (RFC 9449 7)',
        },
        accessTokenQuery: { type: 'apiKey', in: 'query', name: 'access_token' },
        bearerTokenQuery: { type: 'apiKey', in: 'query', name: 'bearer_token' },
        privateToken: { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' },
      },
    },
  })
  // RFC 9728 5.1: each 401 of /api/v4 and userinfo names where a client learns who issues tokens
  app.addHook(
    'onSend',
    announceResourceMetadata(() => settings.issuer),
  )
  // repeated parameters arrive as arrays and are refused where RFC 6749 3.1 / 3.2 asks
  await app.register(formbody)
  // GitLab's clients send `Content-Type: application/json` with no body on a DELETE (python-gitlab),
  // which GitLab reads as no attributes: an empty JSON body is none, anything else is parsed as
  // Fastify parses it (prototype poisoning refused)
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    body.length === 0 ? done(null, undefined) : parseJson(request, String(body), done),
  )
  // the pages keep a session in a cookie; no other route reads or sets one, so only they pay
  // for the cookie hooks (the API answers thousands of requests a second)
  await app.register(async (pages) => {
    await pages.register(cookie)
    for (const routes of [
      authorizeRoutes,
      deviceRoutes,
      signInRoutes,
      signUpRoutes,
      profileApplicationRoutes,
      profileTokenRoutes,
      profileTwoFactorRoutes,
      adminPageRoutes,
    ]) {
      await pages.register(routes)
    }
  })
  for (const routes of [
    assetRoutes,
    metadataRoutes,
    openidRoutes,
    tokenRoutes,
    parRoutes,
    registrationRoutes,
    tokenInfoRoutes,
    revokeIntrospectRoutes,
    apiRoutes,
    apiApplicationRoutes,
    apiAuditEventRoutes,
  ]) {
    await app.register(routes)
  }
  return app
}
