import { createHmac } from 'node:crypto'
import { createOnceStore, dpopProofs } from '@campus/shared'
import fp from 'fastify-plugin'
import type { OAuthApp } from '../oauth-app.ts'

/**
 * Decorates `dpop`: the proofs of the token and PAR endpoints and of the resources (`/api/v4`,
 * userinfo, token info). Used `jti`s are remembered in Redis with `REDIS_URL` (a proof replayed
 * at another instance is refused too); the nonce key is derived from the server key, which every
 * instance shares.
 */
export const dpopPlugin = fp(
  async (app) => {
    const { settings } = app as OAuthApp
    const once = createOnceStore(settings.redisUrl, `${settings.redisPrefix ?? 'oauth:'}dpop-jti:`)
    const nonceKey = settings.dpopNonce
      ? createHmac('sha256', settings.secretKey).update('dpop-nonce').digest()
      : undefined
    app.decorate('dpop', dpopProofs({ once, nonceKey }))
    app.addHook('onClose', async () => once.close())
  },
  { name: 'oauth-dpop', dependencies: ['oauth-settings'] },
)
