import fp from 'fastify-plugin'
import type { OAuthSettings } from '../config.ts'

/** Decorates `settings`. */
export const settingsPlugin = fp(
  async (app, options: { settings: OAuthSettings }) => {
    app.decorate('settings', options.settings)
  },
  { name: 'oauth-settings' },
)
