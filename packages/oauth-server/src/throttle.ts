/**
 * Counts attempts at guessable secrets (passwords on the page and the password grant, second
 * factors, password confirmations, device user codes) per account and per client IP in a fixed
 * window: each attempt is counted before it is checked and given back when it was right, so a
 * burst of simultaneous guesses gets no more checks than the limit. In memory by default; in
 * Redis when REDIS_URL is set, so every instance behind a load balancer sees the same counters.
 */
import { type AttemptCounter, memoryAttempts, redisAttempts } from '@campus/shared'

export interface ThrottleLimits {
  accountLimit: number
  ipLimit: number
  windowSeconds: number
  /** Requests per address and window that make state for an anonymous caller (default 600). */
  anonymousLimit?: number
  /** Open client registrations (RFC 7591) per address and window (default 20). */
  registrationLimit?: number
}

const ANONYMOUS_LIMIT = 600
const REGISTRATION_LIMIT = 20

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
  /**
   * Counts a request that makes state for a caller nobody knows yet (a session, a device grant):
   * undefined while the address is within its limit, else the seconds to wait.
   */
  anonymous(ip: string): Promise<number | undefined>
  /** Counts an open client registration (RFC 7591): undefined while the address is within its limit. */
  registration(ip: string): Promise<number | undefined>
  close(): Promise<void>
}

/**
 * The account key of the counters: the account itself when the login names one (so its
 * username and its email, in any case, share one counter), else the login as typed.
 */
export function throttleAccount(user: { id: number } | undefined, login: string): string {
  return user ? `id:${user.id}` : `login:${login.toLowerCase()}`
}

const accountKey = (account: string) => `throttle:account:${account.toLowerCase()}`
const ipKey = (ip: string) => `throttle:ip:${ip}`

/** The sign-in rule on the shared attempt counter: one count per account, one per address. */
function throttleOn(counter: AttemptCounter, limits: ThrottleLimits): Throttle {
  return {
    attempt: (account, ip) =>
      counter.attempt([
        [accountKey(account), limits.accountLimit],
        [ipKey(ip), limits.ipLimit],
      ]),
    refund: (account, ip) => counter.refund([accountKey(account), ipKey(ip)]),
    succeeded: (account) => counter.clear(accountKey(account)),
    anonymous: (ip) => counter.attempt([[`anonymous:${ip}`, limits.anonymousLimit ?? ANONYMOUS_LIMIT]]),
    registration: (ip) => counter.attempt([[`registration:${ip}`, limits.registrationLimit ?? REGISTRATION_LIMIT]]),
    close: () => counter.close(),
  }
}

export const memoryThrottle = (limits: ThrottleLimits): Throttle =>
  throttleOn(memoryAttempts(limits.windowSeconds), limits)

export const redisThrottle = (url: string, limits: ThrottleLimits, prefix = 'oauth:'): Throttle =>
  throttleOn(redisAttempts(url, limits.windowSeconds, prefix), limits)

export function createThrottle(limits: ThrottleLimits, redisUrl?: string, prefix?: string): Throttle {
  return redisUrl ? redisThrottle(redisUrl, limits, prefix) : memoryThrottle(limits)
}
