/**
 * Cross-instance invalidation of caches (PostgreSQL LISTEN/NOTIFY), one mechanism for both
 * services: every change that must end a cached answer sends a notification on the service's
 * channel in the transaction that makes it, so it fires on commit; every instance listens on a
 * dedicated connection and drops what the notification names when it arrives. While that
 * connection is down an instance cannot know what others change, so it stops caching until it
 * is back (the `lost` and `listening` events).
 */
import { type QueryExecutorProvider, sql } from 'kysely'

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

const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 5000

/** A pg client or pool, or a kysely instance or transaction. */
type Queryable = QueryExecutorProvider | { query(text: string, values: unknown[]): Promise<unknown> }

/** Queued by PostgreSQL until the transaction `db` belongs to commits (at once outside one). */
export async function notifyChange(db: Queryable, channel: string, payload: string): Promise<void> {
  if ('query' in db) await db.query('select pg_notify($1, $2)', [channel, payload])
  else await sql`select pg_notify(${channel}, ${payload})`.execute(db)
}

export interface ChangeListener {
  /**
   * Resolves once this instance hears a notification whose payload is `id` back (PostgreSQL has signalled every
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

export interface ChangeListenerEvents {
  /** A change was committed somewhere (`payload` says what it touched): drop what it ends. */
  changed(payload: string): void
  /** The listening connection is up: caching is safe again (after dropping what was cached). */
  listening(): void
  /** The listening connection is gone: stop caching until `listening`. */
  lost(error: unknown): void
}

/**
 * Holds one connection of `pool` for LISTEN on `channel` (a plain identifier), reconnecting with
 * backoff while the database is away.
 */
export function listenForChanges(pool: Pool, channel: string, events: ChangeListenerEvents): ChangeListener {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`)
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
        const payload = (message as { payload?: string }).payload ?? ''
        events.changed(payload)
        if (payload) waiting.get(payload)?.()
      })
      current.on('error', drop)
      current.on('end', () => drop(new Error('the listening connection ended')))
      await current.query(`LISTEN ${channel}`)
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
        await last.client.query(`UNLISTEN ${channel}`).catch(() => {})
        last.client.release()
      }
    },
  }
}
