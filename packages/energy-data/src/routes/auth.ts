import { JSON_UTF8 } from '@campus/shared'
import Type from 'typebox'
import { sendCached } from '../dashboard/http-cache.ts'
import { routePlugin } from '../energy-app.ts'
import { apiKeyHeaders, apiKeySecurity, endpointsFor, PUBLIC_ROUTE } from '../plugins/auth.ts'
import { keyErrorResponses, RateLimitedResponse } from '../schemas/errors.ts'
import { NotModified } from '../schemas/views.ts'

const AuthStatus = Type.Object(
  {
    status: Type.String({ description: '`authenticated` with a valid key, `public` without one' }),
    key: Type.Optional(Type.String({ description: 'Name of the key the request carried' })),
    user: Type.Optional(
      Type.String({ description: 'Username at the OAuth server, for an access token issued to a person' }),
    ),
  },
  { title: 'AuthStatus', examples: [{ status: 'authenticated', key: 'dashboard' }] },
)

/** Developer checks: is my key valid, what may it call. */
export const authRoutes = routePlugin('energy-auth-routes', (app) => {
  app.get(
    '/auth/protected',
    {
      config: { auth: 'key-any-endpoint' },
      schema: {
        tags: ['Developers'],
        summary: 'Check an API key',
        description:
          'Answers 200 with a valid key (whatever its endpoints) or an active access token (naming its user), 401 otherwise.',
        headers: apiKeyHeaders,
        security: apiKeySecurity,
        response: { 200: AuthStatus, ...keyErrorResponses },
      },
    },
    async (request) => ({ status: 'authenticated', key: request.apiKey?.name, user: request.bearer?.username }),
  )

  app.get(
    '/auth/public',
    {
      config: PUBLIC_ROUTE,
      schema: {
        tags: ['Developers'],
        summary: 'Check without a key',
        description: 'Does not check any key.',
        response: { 200: AuthStatus, 304: NotModified, 429: RateLimitedResponse },
      },
    },
    // public endpoints lean on HTTP caching (and the rate limit) instead of a key
    async (request, reply) => sendCached(request, reply, JSON.stringify({ status: 'public' }), JSON_UTF8),
  )

  app.get(
    '/auth/apikey/endpoints',
    {
      config: { auth: 'key-any-endpoint' },
      schema: {
        tags: ['Developers'],
        summary: 'Endpoints of the current key',
        description:
          "The API's paths this key may call: those its patterns cover, the key checks, and the public ones. " +
          'Path parameters appear as `{uuid}`.',
        headers: apiKeyHeaders,
        security: apiKeySecurity,
        response: {
          200: Type.Array(Type.String(), { examples: [['/auth/protected', '/data/pv', '/metadata/meters/{uuid}']] }),
          ...keyErrorResponses,
        },
      },
    },
    async (request) => endpointsFor(app.endpointCatalog, request),
  )
})
