import rateLimit from '@fastify/rate-limit'
import fp from 'fastify-plugin'
import { Redis } from 'ioredis'
import type { EnergyApp } from '../energy-app.ts'
import { DetailError } from '../errors.ts'
import { credentialKey, routeAuth } from './auth.ts'

/**
 * Every route registered after this plugin is limited: per API key, or per application and user
 * of an access token, when the request carries a valid one, per client address otherwise. A route may tune its own limit with
 * `config: { rateLimit: { max, timeWindow } }` or opt out with `config: { rateLimit: false }`.
 * Over the limit: 429 `{"detail": ...}` with `Retry-After`.
 */
export const rateLimitPlugin = fp(
  async (app) => {
    const { settings } = app as EnergyApp
    const redis = settings.redisUrl
      ? new Redis(settings.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: false })
      : undefined
    if (redis) app.addHook('onClose', async () => void redis.disconnect())
    await app.register(rateLimit, {
      global: true,
      timeWindow: 60_000,
      ...(redis ? { redis, nameSpace: settings.rateLimitPrefix } : {}),
      // a counter store that fails must not take the API down with it
      skipOnError: true,
      allowList: (request) => routeAuth(request) === undefined,
      keyGenerator: credentialKey,
      max: (request) => (request.apiKey || request.bearer ? settings.rateLimitKey : settings.rateLimitPublic),
      errorResponseBuilder: (_request, context) =>
        new DetailError(
          context.statusCode,
          `Rate limit exceeded: at most ${context.max} requests a minute, retry in ${context.after}`,
        ),
    })
  },
  { name: 'energy-rate-limit', dependencies: ['energy-settings', 'energy-auth'] },
)
