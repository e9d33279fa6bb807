/**
 * Counts attempts at guessable secrets (passwords on the page and the password grant, second
 * factors, password confirmations, device user codes) per account and per client IP in a fixed
 * window: each attempt is counted before it is checked and given back when it was right, so a
 * burst of simultaneous guesses gets no more checks than the limit. In memory by default; in
 * Redis when REDIS_URL is set, so every instance behind a load balancer sees the same counters.
 */
import { Redis } from 'ioredis'

export interface ThrottleLimits {
  accountLimit: number
  ipLimit: number
  windowSeconds: number
}

export interface Throttle {
  /**
   * Counts an attempt at a guessable secret against the account and the client address BEFORE
   * it is checked, in one atomic step, so attempts arriving together each see their own count:
   * undefined when this one may be checked, else the seconds to wait (nothing is checked then,
   * and the attempt is given back: only checked attempts count).
   */
  attempt(account: string, ip: string): Promise<number | undefined>
  /** The attempt was right: it does not count as a failure (both counts go back down by one). */
  refund(account: string, ip: string): Promise<void>
  /** A completed sign-in clears the account's counter (not the address's). */
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
  const bump = (key: string, now: number): Counter => {
    const c = live(key, now)
    if (c) {
      c.count++
      return c
    }
    const fresh = { count: 1, resetAt: now + limits.windowSeconds * 1000 }
    counters.set(key, fresh)
    return fresh
  }
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const [k, c] of counters) if (c.resetAt <= now) counters.delete(k)
  }, 60_000)
  sweep.unref()
  return {
    async attempt(account, ip) {
      const now = Date.now()
      let wait: number | undefined
      for (const [key, limit] of [
        [accountKey(account), limits.accountLimit],
        [ipKey(ip), limits.ipLimit],
      ] as const) {
        const c = bump(key, now)
        if (c.count > limit) wait = Math.max(wait ?? 0, Math.ceil((c.resetAt - now) / 1000))
      }
      if (wait !== undefined) await this.refund(account, ip)
      return wait
    },
    async refund(account, ip) {
      const now = Date.now()
      for (const key of [accountKey(account), ipKey(ip)]) {
        const c = live(key, now)
        if (c && c.count > 0) c.count--
      }
    },
    async succeeded(account) {
      counters.delete(accountKey(account))
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
    async attempt(account, ip) {
      const multi = redis.multi()
      for (const [key] of keys(account, ip)) {
        multi.incr(key)
        multi.expire(key, limits.windowSeconds, 'NX')
        multi.ttl(key)
      }
      const results = await multi.exec()
      if (!results) throw new Error('throttle: the attempt was not counted')
      let wait: number | undefined
      keys(account, ip).forEach(([, limit], i) => {
        const [countError, count] = results[i * 3]!
        const [ttlError, ttl] = results[i * 3 + 2]!
        if (countError || ttlError) throw countError ?? ttlError
        if (Number(count) > limit) wait = Math.max(wait ?? 0, Number(ttl) > 0 ? Number(ttl) : limits.windowSeconds)
      })
      if (wait !== undefined) await this.refund(account, ip)
      return wait
    },
    async refund(account, ip) {
      const [[accountCounter], [ipCounter]] = keys(account, ip)
      await redis.eval(REFUND, 2, accountCounter, ipCounter)
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
