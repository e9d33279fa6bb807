/** RFC 9728: what a client that knows only this API's URL learns of the OAuth server whose tokens it takes. */
import { PROTECTED_RESOURCE_PATH, ProtectedResourceMetadata, protectedResourceMetadata } from '@campus/shared'
import { routePlugin } from '../energy-app.ts'
import { publicBase, READ_ENERGY } from '../plugins/auth.ts'
import { NotFoundResponse, RateLimitedResponse } from '../schemas/errors.ts'

export const resourceMetadataRoutes = routePlugin('energy-resource-metadata-routes', (app) => {
  app.get(
    PROTECTED_RESOURCE_PATH,
    {
      schema: {
        tags: ['Developers'],
        summary: 'Protected resource metadata (RFC 9728)',
        description:
          'The OAuth server whose access tokens this API takes (read_energy), as `Authorization: Bearer` or, bound to a key, `Authorization: DPoP` (RFC 9449); every 401 names this document in `resource_metadata`. 404 when the API takes API keys only.',
        response: { 200: ProtectedResourceMetadata, 404: NotFoundResponse, 429: RateLimitedResponse },
      },
    },
    async (request, reply) => {
      const oauth = app.settings.oauth
      if (!oauth) return reply.code(404).send({ detail: 'This API takes API keys only: no OAuth server is configured' })
      return protectedResourceMetadata({
        resource: publicBase(request),
        issuer: oauth.issuer,
        scopes: [READ_ENERGY],
        bearerMethods: ['header'],
        name: 'Energy data API',
      })
    },
  )
})
