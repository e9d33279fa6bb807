import type { Kysely, Transaction } from 'kysely'
import type { OAuthSettings } from './config.ts'
import type { Application, OAuthDB } from './db/schema.ts'
import type { OpenIdKeys } from './openid.ts'
import type { BearerTokenRow } from './repositories/tokens.ts'
import type { Throttle } from './throttle.ts'
import type { TtlCache } from './token-cache.ts'

/** What routes and grant handlers share: the database, the settings, the throttle. */
export interface ServerContext {
  db: Kysely<OAuthDB>
  settings: OAuthSettings
  throttle: Throttle
  /** Access-token lookups of the API hot path; cleared by every revocation here. */
  tokenCache: TtlCache<CachedToken>
  /** Applications by client_id (secrets are still verified on every request). */
  clientCache: TtlCache<Application>
  /**
   * Runs `work` in a transaction that also notifies every instance (on commit) to forget its
   * cached lookups, forgets this instance's, and answers once the notification has gone out.
   * Every revocation, rotation, profile or application change goes through here.
   */
  commitChange<T>(work: (trx: Transaction<OAuthDB>) => Promise<T>): Promise<T>
  /** Before trusting a cache hit: every change committed by any instance so far has been heard. */
  syncCaches(): Promise<void>
  /** id_token signing keys (OpenID Connect) */
  openid: OpenIdKeys
}

/** A token lookup with the instant it expires (by the database clock at lookup time). */
export interface CachedToken {
  row: BearerTokenRow
  expiresAt: number
}
