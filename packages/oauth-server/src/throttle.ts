/**
 * Counts failed sign-ins (page and password grant) per account and per client IP in a fixed
 * window. In memory by default; in Redis when REDIS_URL is set, so every instance behind a load
 * balancer sees the same counters.
 */
import { Redis } from 'ioredis'

export interface ThrottleLimits {
  accountLimit: number
  ipLimit: number
  windowSeconds: number
}

export interface Throttle {
  /** Seconds to wait when the account or the IP is over its limit, else undefined. */
  blocked(account: string, ip: string): Promise<number | undefined>
  failed(account: string, ip: string): Promise<void>
  /** A successful sign-in clears the account's counter (not the IP's). */
  succeeded(account: string): Promise<void>
  close(): Promise<void>
}

/**
 * The account key of the counters: the account itself when the login names one (so its
 * username and its email, in any case, share one counter), else the login as typed.
 */
export function throttleAccount(user: { id: number } | undefined, login: string): string {
  return user ? `id:${user.id}` : `login:${login.toLowerCase()}`
}

interface Counter {
  count: number
  resetAt: number
}

const accountKey = (account: string) => `throttle:account:${account.toLowerCase()}`
const ipKey = (ip: string) => `throttle:ip:${ip}`

export function memoryThrottle(limits: ThrottleLimits): Throttle {
  const counters = new Map<string, Counter>()
  const live = (key: string, now: number) => {
    const c = counters.get(key)
    if (c && c.resetAt <= now) {
      counters.delete(key)
      return undefined
    }
    return c
  }
  const bump = (key: string, now: number) => {
    const c = live(key, now)
    if (c) c.count++
    else counters.set(key, { count: 1, resetAt: now + limits.windowSeconds * 1000 })
  }
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const [k, c] of counters) if (c.resetAt <= now) counters.delete(k)
  }, 60_000)
  sweep.unref()
  return {
    async blocked(account, ip) {
      const now = Date.now()
      let wait: number | undefined
      for (const [key, limit] of [
        [accountKey(account), limits.accountLimit],
        [ipKey(ip), limits.ipLimit],
      ] as const) {
        const c = live(key, now)
        if (c && c.count >= limit) wait = Math.max(wait ?? 0, Math.ceil((c.resetAt - now) / 1000))
      }
      return wait
    },
    async failed(account, ip) {
      const now = Date.now()
      bump(accountKey(account), now)
      bump(ipKey(ip), now)
    },
    async succeeded(account) {
      counters.delete(accountKey(account))
    },
    async close() {
      clearInterval(sweep)
    },
  }
}

export function redisThrottle(url: string, limits: ThrottleLimits, prefix = 'oauth:'): Throttle {
  const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true })
  // errors surface on the command that failed; a connection error alone must not crash the process
  redis.on('error', () => {})
  const keys = (account: string, ip: string) =>
    [
      [prefix + accountKey(account), limits.accountLimit],
      [prefix + ipKey(ip), limits.ipLimit],
    ] as const
  return {
    async blocked(account, ip) {
      let wait: number | undefined
      for (const [key, limit] of keys(account, ip)) {
        const [count, ttl] = await Promise.all([redis.get(key), redis.ttl(key)])
        if (Number(count ?? 0) >= limit) wait = Math.max(wait ?? 0, ttl > 0 ? ttl : limits.windowSeconds)
      }
      return wait
    },
    async failed(account, ip) {
      const multi = redis.multi()
      for (const [key] of keys(account, ip)) {
        multi.incr(key)
        multi.expire(key, limits.windowSeconds, 'NX')
      }
      await multi.exec()
    },
    async succeeded(account) {
      await redis.del(prefix + accountKey(account))
    },
    async close() {
      redis.disconnect()
    },
  }
}

export function createThrottle(limits: ThrottleLimits, redisUrl?: string, prefix?: string): Throttle {
  return redisUrl ? redisThrottle(redisUrl, limits, prefix) : memoryThrottle(limits)
}
