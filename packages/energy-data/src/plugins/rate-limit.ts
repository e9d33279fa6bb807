import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Redis } from 'ioredis'
import { DetailError } from '../errors.ts'
import { routeAuth } from './auth.ts'

export interface RateLimitOptions {
  /** Requests per minute and client address on public routes. */
  publicPerMinute: number
  /** Requests per minute and API key. */
  keyPerMinute: number
  /** Counters shared by every instance; per-process memory without it. */
  redisUrl?: string | undefined
  /** Prefix of the counters in Redis. */
  redisPrefix?: string
}

/**
 * Every route registered after this plugin is limited: per API key when the request carries a
 * valid one, per client address otherwise. A route may tune its own limit with
 * `config: { rateLimit: { max, timeWindow } }` or opt out with `config: { rateLimit: false }`.
 * Over the limit: 429 `{"detail": ...}` with `Retry-After`.
 */
export const rateLimitPlugin = fp(
  async (app: FastifyInstance, options: RateLimitOptions) => {
    const redis = options.redisUrl
      ? new Redis(options.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: false })
      : undefined
    if (redis) app.addHook('onClose', async () => void redis.disconnect())
    await app.register(rateLimit, {
      global: true,
      timeWindow: 60_000,
      ...(redis ? { redis, nameSpace: options.redisPrefix ?? 'energy-rl:' } : {}),
      // a counter store that fails must not take the API down with it
      skipOnError: true,
      allowList: (request) => routeAuth(request) === undefined,
      keyGenerator: (request) => (request.apiKey ? `key:${request.apiKey.id}` : `ip:${request.ip}`),
      max: (request) => (request.apiKey ? options.keyPerMinute : options.publicPerMinute),
      errorResponseBuilder: (_request, context) =>
        new DetailError(
          context.statusCode,
          `Rate limit exceeded: at most ${context.max} requests a minute, retry in ${context.after}`,
        ),
    })
  },
  { name: 'energy-rate-limit', dependencies: ['energy-auth'] },
)
