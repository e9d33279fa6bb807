import fp from 'fastify-plugin'
import { auditLog } from '../audit.ts'
import type { OAuthApp } from '../oauth-app.ts'

/** Decorates `audit`; what the token endpoint holds is written before the app closes. */
export const auditPlugin = fp(
  async (app) => {
    const audit = auditLog((app as OAuthApp).db, (error) => app.log.error({ err: error }, 'audit events not written'))
    app.decorate('audit', audit)
    app.addHook('onClose', async () => audit.flush())
  },
  { name: 'oauth-audit', dependencies: ['oauth-database'] },
)
