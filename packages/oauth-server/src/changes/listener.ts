/**
 * Cross-instance invalidation of the lookup caches (PostgreSQL LISTEN/NOTIFY). Every change that
 * must end a cached lookup (revocation, rotation, replay, profile or application change) sends a
 * notification in the transaction that makes it, so it fires on commit; every instance listens
 * on a dedicated connection and clears its caches when one arrives. While that connection is
 * down an instance cannot know what others change, so it stops caching until it is back.
 */
import { type Kysely, sql, type Transaction } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'

/** What the listener needs of a pg pool and its clients. */
interface PoolClient {
  on(event: 'notification' | 'error' | 'end', listener: (arg: unknown) => void): unknown
  removeAllListeners(event: 'notification'): unknown
  query(text: string): Promise<unknown>
  release(error?: Error): void
}
export interface Pool {
  connect(): Promise<PoolClient>
}

export const CACHE_CHANNEL = 'oauth_cache_invalidation'

const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 5000

/** Queued by PostgreSQL until the transaction `db` belongs to commits (at once outside one). */
export async function notifyCacheChange(db: Kysely<OAuthDB> | Transaction<OAuthDB>, id: string): Promise<void> {
  await sql`select pg_notify(${CACHE_CHANNEL}, ${id})`.execute(db)
}

export interface CacheListener {
  /**
   * Resolves once this instance hears notification `id` back (PostgreSQL has signalled every
   * listener by then), or after `timeoutMs`; at once while not listening.
   */
  heard(id: string, timeoutMs: number): Promise<void>
  /**
   * Resolves once every notification committed before the call has been delivered here: a
   * round trip on the listening connection, before whose answer PostgreSQL sends what is
   * pending. Concurrent callers share one round trip (a caller arriving while one is under way
   * waits for the next, since the current one may have started before its commit).
   */
  sync(): Promise<void>
  close(): Promise<void>
}

export interface CacheListenerEvents {
  /** Another change was committed somewhere: drop every cached lookup. */
  changed(): void
  /** The listening connection is up: caching is safe again (after dropping what was cached). */
  listening(): void
  /** The listening connection is gone: stop caching until `listening`. */
  lost(error: unknown): void
}

/** Holds one connection of `pool` for LISTEN, reconnecting with backoff while the database is away. */
export function listenForCacheChanges(pool: Pool, events: CacheListenerEvents): CacheListener {
  let closed = false
  /** The connection listening now, and how to let go of it without treating that as a loss. */
  let active: { client: PoolClient; retire(): void } | undefined
  let timer: NodeJS.Timeout | undefined
  let delay = RECONNECT_MIN_MS
  const waiting = new Map<string, () => void>()
  let syncing: Promise<void> | undefined
  let queued: Promise<void> | undefined
  const roundTrip = (): Promise<void> => {
    const listening = active
    // not listening: caching is off (see `lost`), there is nothing to catch up with
    if (!listening) return Promise.resolve()
    const trip = listening.client.query('select 1').then(
      () => {},
      () => {},
    )
    syncing = trip.finally(() => {
      syncing = undefined
    })
    return syncing
  }

  const schedule = () => {
    if (closed || timer) return
    timer = setTimeout(() => {
      timer = undefined
      void connect()
    }, delay)
    timer.unref()
    delay = Math.min(delay * 2, RECONNECT_MAX_MS)
  }

  async function connect(): Promise<void> {
    let current: PoolClient | undefined
    let dead = false
    const drop = (error: unknown) => {
      if (dead) return
      dead = true
      if (active?.client === current) active = undefined
      current?.release(error instanceof Error ? error : new Error(String(error)))
      if (!closed) events.lost(error)
      schedule()
    }
    try {
      current = await pool.connect()
      current.on('notification', (message) => {
        events.changed()
        const id = (message as { payload?: string }).payload
        if (id) waiting.get(id)?.()
      })
      current.on('error', drop)
      current.on('end', () => drop(new Error('the listening connection ended')))
      await current.query(`LISTEN ${CACHE_CHANNEL}`)
      if (closed) {
        dead = true
        current.release()
        return
      }
      active = {
        client: current,
        retire: () => {
          dead = true
        },
      }
      delay = RECONNECT_MIN_MS
      events.listening()
    } catch (error) {
      drop(error)
    }
  }

  void connect()
  return {
    heard(id, timeoutMs) {
      if (!active) return Promise.resolve()
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutMs)
        timer.unref()
        function done() {
          clearTimeout(timer)
          waiting.delete(id)
          resolve()
        }
        waiting.set(id, done)
      })
    },
    sync() {
      if (!syncing) return roundTrip()
      queued ??= syncing.then(() => {
        queued = undefined
        return roundTrip()
      })
      return queued
    },
    async close() {
      for (const done of waiting.values()) done()
      closed = true
      if (timer) clearTimeout(timer)
      const last = active
      active = undefined
      if (last) {
        last.retire()
        last.client.removeAllListeners('notification')
        await last.client.query(`UNLISTEN ${CACHE_CHANNEL}`).catch(() => {})
        last.client.release()
      }
    },
  }
}
