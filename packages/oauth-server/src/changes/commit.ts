/**
 * The change mechanism: every write that changes what a cached lookup returns (a revocation, a
 * rotation, a lock, a profile, two-factor or application change) runs in a transaction opened
 * here, which on commit tells every instance to forget its cached lookups (LISTEN/NOTIFY, see
 * notifications.ts in shared) and forgets this instance's. The writers of those rows accept only the handle
 * this gives (`ChangeTransaction`), so a write that skips it does not compile.
 */
import { randomUUID } from 'node:crypto'
import {
  type ChangeListener,
  type ListeningPool,
  listenForChanges,
  notifyChange,
  retryingConflicts,
} from '@campus/shared'
import type { Kysely, Transaction } from 'kysely'
import type { Application, OAuthDB } from '../db/schema.ts'
import type { BearerTokenRow } from '../repositories/tokens.ts'
import { TtlCache } from './ttl-cache.ts'

declare const CHANGE: unique symbol

/** A transaction opened by `commit`: the only handle the writers of cached rows take. */
export type ChangeTransaction = Transaction<OAuthDB> & { readonly [CHANGE]: true }

/** A token lookup with the instant it expires (by the database clock at lookup time). */
export interface CachedToken {
  row: BearerTokenRow
  expiresAt: number
}

export interface Changes {
  /**
   * Runs `work` in a transaction that also notifies every instance (on commit) to forget its
   * cached lookups, forgets this instance's, and answers once the notification has gone out.
   */
  commit<T>(work: (trx: ChangeTransaction) => Promise<T>): Promise<T>
  /** Access-token lookups of the API hot path. */
  readonly tokens: TtlCache<CachedToken>
  /** Applications by client_id (secrets are still verified on every request). */
  readonly clients: TtlCache<Application>
  /** Before trusting a cache hit: every change committed by any instance so far has been heard. */
  sync(): Promise<void>
  /** Whether `sync` has anything to do (OAUTH_CACHE_SYNC across instances); callers skip it otherwise. */
  readonly syncing: boolean
  close(): Promise<void>
}

/** The LISTEN/NOTIFY channel of the OAuth server's changes (payload: the change's id). */
export const CACHE_CHANNEL = 'oauth_cache_invalidation'

/** How long a change waits to hear its own notification back before answering anyway. */
const ECHO_TIMEOUT_MS = 1000

export interface ChangeOptions {
  /** How long a lookup may be reused (0: no caching). */
  cacheSeconds: number
  /** Tell other instances (processes sharing the database) about each change. */
  notify: boolean
  /** Listen to the others' changes on a connection of this pool (with `notify`). */
  pool?: ListeningPool
  /** Check the channel before trusting a cache hit (exact across instances, slower). */
  cacheSync?: boolean
  /** The listening connection went away: caching is off until it is back. */
  lost?: (error: unknown) => void
}

export function changeMechanism(db: Kysely<OAuthDB>, options: ChangeOptions): Changes {
  const tokens = new TtlCache<CachedToken>(options.cacheSeconds)
  const clients = new TtlCache<Application>(options.cacheSeconds, 1000)
  const caches = [tokens, clients]
  let listener: ChangeListener | undefined
  if (options.notify && options.pool) {
    // nothing is cached until the listener is up: a change made elsewhere must never go unheard
    for (const cache of caches) cache.disable()
    listener = listenForChanges(options.pool, CACHE_CHANNEL, {
      changed: () => {
        for (const cache of caches) cache.clear()
      },
      listening: () => {
        for (const cache of caches) cache.enable()
      },
      lost: (error) => {
        for (const cache of caches) cache.disable()
        options.lost?.(error)
      },
    })
  }
  return {
    tokens,
    clients,
    async commit(work) {
      const id = randomUUID()
      const heard = listener?.heard(id, ECHO_TIMEOUT_MS)
      // a deadlock with another writer (an application deleted while its tokens are refreshed)
      // ends one of the two; that one runs again and sees what the other did
      const result = await retryingConflicts(() =>
        db.transaction().execute(async (trx) => {
          const value = await work(trx as ChangeTransaction)
          if (options.notify) await notifyChange(trx, CACHE_CHANNEL, id)
          return value
        }),
      )
      // after commit: a lookup racing the transaction may have cached what it changed
      for (const cache of caches) cache.clear()
      await heard
      return result
    },
    sync: () => (options.cacheSync && listener ? listener.sync() : Promise.resolve()),
    syncing: Boolean(options.cacheSync && listener),
    close: async () => listener?.close(),
  }
}
