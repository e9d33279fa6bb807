/**
 * Remembers values that may be used only once within a while (a DPoP proof's `jti`): the first
 * use of a key is told apart from every later one, in one atomic step. In memory by default; in
 * Redis (`SET NX EX`) when a URL is given, so that a value used at one instance is refused at
 * every other.
 */
import { connectRedis } from './redis.ts'

export interface OnceStore {
  /** True the first time `key` is seen within `ttlSeconds`, false for every later time. */
  first(key: string, ttlSeconds: number): Promise<boolean>
  close(): Promise<void>
}

/** Keys kept at most in memory; past it the oldest (the nearest to expiring, as all share one lifetime) go. */
const MEMORY_KEYS = 100_000

export function memoryOnce(): OnceStore {
  const seen = new Map<string, number>()
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const [key, until] of seen) if (until <= now) seen.delete(key)
  }, 60_000)
  sweep.unref()
  return {
    async first(key, ttlSeconds) {
      const now = Date.now()
      const until = seen.get(key)
      if (until !== undefined && until > now) return false
      if (seen.size >= MEMORY_KEYS) seen.delete(seen.keys().next().value as string)
      seen.set(key, now + ttlSeconds * 1000)
      return true
    },
    async close() {
      clearInterval(sweep)
    },
  }
}

export function redisOnce(url: string, prefix: string): OnceStore {
  const redis = connectRedis(url)
  return {
    async first(key, ttlSeconds) {
      return (await redis.set(prefix + key, '1', 'EX', ttlSeconds, 'NX')) === 'OK'
    },
    async close() {
      redis.disconnect()
    },
  }
}

export function createOnceStore(redisUrl: string | undefined, prefix = ''): OnceStore {
  return redisUrl ? redisOnce(redisUrl, prefix) : memoryOnce()
}
