/** The pages' stylesheet and script (no third-party assets). */
import { routePlugin } from '../oauth-app.ts'
import { SCRIPT, SCRIPT_PATH, STYLESHEET, STYLESHEET_PATH } from '../pages/layout.ts'

export const assetRoutes = routePlugin('oauth-asset-routes', (app) => {
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
})
