import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'

/**
 * A Redis client for the counters shared by a service's instances. ioredis is loaded on first
 * use: only a service given a Redis URL pays for it, not every command line. A connection error
 * alone never crashes the process: it surfaces on the command that failed.
 */
export function connectRedis(url: string): Redis {
  const { Redis: Client } = createRequire(import.meta.url)('ioredis') as { Redis: typeof Redis }
  const redis = new Client(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true })
  redis.on('error', () => {})
  return redis
}
