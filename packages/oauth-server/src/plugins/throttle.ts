import fp from 'fastify-plugin'
import type { OAuthApp } from '../oauth-app.ts'
import { createThrottle, type Throttle } from '../throttle.ts'

/** Decorates `throttle` (the given one, else memory or Redis as the settings say); closed with the app. */
export const throttlePlugin = fp(
  async (app, options: { throttle?: Throttle | undefined }) => {
    const { settings } = app as OAuthApp
    const throttle = options.throttle ?? createThrottle(settings.throttle, settings.redisUrl, settings.redisPrefix)
    app.decorate('throttle', throttle)
    app.addHook('onClose', async () => throttle.close())
  },
  { name: 'oauth-throttle', dependencies: ['oauth-settings'] },
)
