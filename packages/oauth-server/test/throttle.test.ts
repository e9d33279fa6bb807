import { randomBytes } from 'node:crypto'
import { needsService } from '@campus/shared/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { memoryThrottle, redisThrottle, type Throttle } from '../src/throttle.ts'

const limits = { accountLimit: 2, ipLimit: 3, windowSeconds: 30 }
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const redisUp = await needsService('Redis throttle test', redisUrl)

async function behaves(throttle: Throttle) {
  expect(await throttle.blocked('alice', '10.0.0.1')).toBeUndefined()
  await throttle.failed('alice', '10.0.0.1')
  await throttle.failed('Alice', '10.0.0.2')
  // account limit reached (names compare case-insensitively), from any IP
  const wait = await throttle.blocked('alice', '10.0.0.9')
  expect(wait).toBeGreaterThan(0)
  expect(wait).toBeLessThanOrEqual(30)
  await throttle.succeeded('alice')
  expect(await throttle.blocked('alice', '10.0.0.9')).toBeUndefined()
  // IP limit: three failures from one IP block every account from it
  for (const name of ['b', 'c', 'd']) await throttle.failed(name, '10.0.0.3')
  expect(await throttle.blocked('zed', '10.0.0.3')).toBeGreaterThan(0)
  expect(await throttle.blocked('zed', '10.0.0.4')).toBeUndefined()
}

describe('throttling of failed sign-ins per account and per IP', () => {
  const closers: Throttle[] = []
  afterAll(async () => {
    for (const t of closers) await t.close()
  })

  it('in memory', async () => {
    const t = memoryThrottle(limits)
    closers.push(t)
    await behaves(t)
  })

  it.runIf(redisUp)('in Redis (shared by every instance)', async () => {
    const t = redisThrottle(redisUrl, limits, `test:${randomBytes(6).toString('hex')}:`)
    closers.push(t)
    await behaves(t)
  })
})
