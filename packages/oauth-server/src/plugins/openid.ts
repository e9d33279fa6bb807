import fp from 'fastify-plugin'
import type { OAuthApp } from '../oauth-app.ts'
import { OpenIdKeys } from '../openid.ts'

/** Decorates `openid`: the keys that sign id_tokens. */
export const openidPlugin = fp(
  async (app) => {
    const { db, settings } = app as OAuthApp
    app.decorate('openid', new OpenIdKeys(db, settings.secretKey))
  },
  { name: 'oauth-openid', dependencies: ['oauth-settings', 'oauth-database'] },
)
