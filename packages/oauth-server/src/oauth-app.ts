/**
 * The instance every plugin of the server works on: Fastify with the TypeBox type provider,
 * plus the services the capability plugins (`plugins/`) decorate it with.
 */
import { type DpopProofs, routePlugins, type ServiceApp } from '@campus/shared'
import type { Kysely } from 'kysely'
import type { AuditLog } from './audit.ts'
import type { Changes } from './changes/commit.ts'
import type { OAuthSettings } from './config.ts'
import type { OAuthDB } from './db/schema.ts'
import type { OpenIdKeys } from './openid.ts'
import type { Purged } from './repositories/token-purge.ts'
import type { Throttle } from './throttle.ts'

/** The decorations, each added by the capability plugin named beside it. */
export interface OAuthServices {
  /** `oauth-database` */
  db: Kysely<OAuthDB>
  /** `oauth-database`: deletes what has expired, and the tokens ended before the retention */
  sweep: () => Promise<Purged>
  /** `oauth-settings`: read on every request, so a test may set the issuer once it knows its port */
  settings: OAuthSettings
  /** `oauth-throttle`: failed sign-in counters */
  throttle: Throttle
  /** `oauth-changes`: writes to cached rows, and the caches */
  changes: Changes
  /** `oauth-openid`: id_token signing keys */
  openid: OpenIdKeys
  /** `oauth-dpop`: DPoP proofs (RFC 9449), their used jti shared through Redis when configured */
  dpop: DpopProofs
  /** `oauth-audit`: audit events */
  audit: AuditLog
}

export type OAuthApp = ServiceApp<OAuthServices>

/** The capability plugins, by the name they register under. */
const CAPABILITIES = [
  'oauth-settings',
  'oauth-database',
  'oauth-throttle',
  'oauth-changes',
  'oauth-openid',
  'oauth-dpop',
  'oauth-audit',
]

/** A plugin of routes, registered after the capability plugins and handed the typed instance. */
export const routePlugin = routePlugins<OAuthApp>(CAPABILITIES)
