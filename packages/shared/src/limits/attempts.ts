/**
 * Counts attempts at something guessable (a password, a code, a credential) in a fixed window,
 * the one rule of every service: an attempt is counted BEFORE it is checked, in one atomic step,
 * so attempts arriving together each see their own count and a burst gets no more checks than
 * the limit; one past the limit is not checked at all, and is given back; one that was right is
 * given back by its caller (`refund`). So only checked, failed attempts stay counted. In memory
 * by default; in Redis (INCR) when a URL is given, so every instance sees the same counts.
 */
import { connectRedis } from './redis.ts'

/** A counter's key and its limit within the window. */
export type Limited = readonly [key: string, limit: number]

export interface AttemptCounter {
  /** Counts one attempt under each key: undefined when it may be checked, else the seconds to wait. */
  attempt(keys: readonly Limited[]): Promise<number | undefined>
  /** The attempt was right (or not made): each count goes back down by one. */
  refund(keys: readonly string[]): Promise<void>
  /** Forgets a key's count (a completed sign-in clears its account's). */
  clear(key: string): Promise<void>
  close(): Promise<void>
}

interface Counter {
  count: number
  resetAt: number
}

export function memoryAttempts(windowSeconds: number): AttemptCounter {
  const counters = new Map<string, Counter>()
  const live = (key: string, now: number) => {
    const c = counters.get(key)
    if (c && c.resetAt <= now) {
      counters.delete(key)
      return undefined
    }
    return c
  }
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const [k, c] of counters) if (c.resetAt <= now) counters.delete(k)
  }, 60_000)
  sweep.unref()
  const refund = async (keys: readonly string[]) => {
    const now = Date.now()
    for (const key of keys) {
      const c = live(key, now)
      if (c && c.count > 0) c.count--
    }
  }
  return {
    async attempt(keys) {
      const now = Date.now()
      let wait: number | undefined
      for (const [key, limit] of keys) {
        let c = live(key, now)
        if (c) c.count++
        else {
          c = { count: 1, resetAt: now + windowSeconds * 1000 }
          counters.set(key, c)
        }
        if (c.count > limit) wait = Math.max(wait ?? 0, Math.ceil((c.resetAt - now) / 1000))
      }
      if (wait !== undefined) await refund(keys.map(([key]) => key))
      return wait
    },
    refund,
    async clear(key) {
      counters.delete(key)
    },
    async close() {
      clearInterval(sweep)
    },
  }
}

/** Gives an attempt back: only counters still there (one that expired meanwhile stays gone). */
const REFUND = `for _, key in ipairs(KEYS) do
  if redis.call('exists', key) == 1 then redis.call('decr', key) end
end`

export function redisAttempts(url: string, windowSeconds: number, prefix: string): AttemptCounter {
  const redis = connectRedis(url)
  const refund = async (keys: readonly string[]) => {
    if (keys.length) await redis.eval(REFUND, keys.length, ...keys.map((key) => prefix + key))
  }
  return {
    async attempt(keys) {
      const multi = redis.multi()
      for (const [key] of keys) {
        multi.incr(prefix + key)
        multi.expire(prefix + key, windowSeconds, 'NX')
        multi.ttl(prefix + key)
      }
      const results = await multi.exec()
      if (!results) throw new Error('attempt counter: the attempt was not counted')
      let wait: number | undefined
      keys.forEach(([, limit], i) => {
        const [countError, count] = results[i * 3]!
        const [ttlError, ttl] = results[i * 3 + 2]!
        if (countError || ttlError) throw countError ?? ttlError
        if (Number(count) > limit) wait = Math.max(wait ?? 0, Number(ttl) > 0 ? Number(ttl) : windowSeconds)
      })
      if (wait !== undefined) await refund(keys.map(([key]) => key))
      return wait
    },
    refund,
    async clear(key) {
      await redis.del(prefix + key)
    },
    async close() {
      redis.disconnect()
    },
  }
}

export function createAttemptCounter(windowSeconds: number, redisUrl?: string, prefix = ''): AttemptCounter {
  return redisUrl ? redisAttempts(redisUrl, windowSeconds, prefix) : memoryAttempts(windowSeconds)
}
