import type { Kysely } from 'kysely'
import type { OAuthSettings } from './config.ts'
import type { OAuthDB } from './db/schema.ts'
import type { Throttle } from './throttle.ts'
import type { TokenCache } from './token-cache.ts'

/** What routes and grant handlers share: the database, the settings, the throttle. */
export interface ServerContext {
  db: Kysely<OAuthDB>
  settings: OAuthSettings
  throttle: Throttle
  /** Access-token lookups of the API hot path; cleared by every revocation here. */
  tokenCache: TokenCache
}
