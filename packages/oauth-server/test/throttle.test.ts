import { randomBytes } from 'node:crypto'
import { needsService } from '@campus/shared/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { totp } from '../src/domain/totp.ts'
import { memoryThrottle, redisThrottle, type Throttle } from '../src/throttle.ts'
import { Browser, formFields, PASSWORD, postForm, seed, startServer, type TestServer } from './helpers.ts'

const limits = { accountLimit: 2, ipLimit: 3, windowSeconds: 30 }
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
const redisUp = await needsService('Redis throttle test', 'REDIS_URL', redisUrl)

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

describe('throttled sign-in over HTTP', () => {
  const servers: TestServer[] = []
  afterAll(async () => {
    for (const s of servers) await s.close()
  })
  async function limitedServer(accountLimit: number) {
    const server = await startServer({ throttle: { accountLimit, ipLimit: 1000, windowSeconds: 60 } })
    servers.push(server)
    return { server, fixtures: await seed(server.db, server.settings.secretKey) }
  }
  async function signIn(browser: Browser, username: string, password: string) {
    const fields = formFields(await (await browser.request('/users/sign_in')).text())
    return browser.request('/users/sign_in', { form: { ...fields, username, password } })
  }

  it('the second-factor limit holds when the right password is entered again', async () => {
    const { server, fixtures } = await limitedServer(3)
    const wrongCode = totp(fixtures.bob.otpSecret) === '000000' ? '111111' : '000000'
    let wrongCodesAnswered = 0
    let throttled: Response | undefined
    for (let round = 0; round < 3 && !throttled; round++) {
      const browser = new Browser(server.url)
      const password = await signIn(browser, 'bob', PASSWORD)
      if (password.status === 429) throttled = password
      for (let i = 0; i < 2 && !throttled; i++) {
        const fields = formFields(await (await browser.request('/users/two_factor?return_to=/profile')).text())
        const answer = await browser.request('/users/two_factor', { form: { ...fields, otp_attempt: wrongCode } })
        if (answer.status === 429) throttled = answer
        else wrongCodesAnswered++
      }
    }
    expect(throttled?.status).toBe(429)
    expect(wrongCodesAnswered).toBe(3)
  })

  it('the account limit counts an account however it is named (username or email, any case)', async () => {
    const { server } = await limitedServer(2)
    const browser = new Browser(server.url)
    expect((await signIn(browser, 'alice', 'wrong one')).headers.get('location')).toMatch(/error=invalid/)
    expect((await signIn(browser, 'ALICE@example.org', 'wrong two')).headers.get('location')).toMatch(/error=invalid/)
    expect((await signIn(browser, 'alice@example.org', PASSWORD)).status).toBe(429)
    expect((await signIn(browser, 'Alice', PASSWORD)).status).toBe(429)
    const grant = await postForm(server.url, '/oauth/token', {
      grant_type: 'password',
      username: 'alice',
      password: PASSWORD,
    })
    expect(grant.status).toBe(429)
  })
})

describe('the per-IP limit behind a reverse proxy (OAUTH_TRUSTED_PROXIES)', () => {
  const grant = (app: TestServer['app'], forwardedFor: string, password: string) =>
    app.inject({
      method: 'POST',
      url: '/oauth/token',
      // every request reaches the server from the proxy's address
      remoteAddress: '10.1.2.3',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forwardedFor },
      payload: new URLSearchParams({ grant_type: 'password', username: 'alice', password }).toString(),
    })

  it('behind a trusted proxy each client is counted by its own address, which it cannot forge', async () => {
    const server = await startServer(
      { throttle: { accountLimit: 100, ipLimit: 3, windowSeconds: 60 }, trustedProxies: ['10.1.2.0/24'] },
      { listen: false },
    )
    try {
      await seed(server.db, server.settings.secretKey)
      // an attacker behind the proxy, prepending addresses of its own choosing to the header
      for (const forged of ['203.0.113.7', '192.0.2.1, 203.0.113.7', '192.0.2.2, 203.0.113.7']) {
        expect((await grant(server.app, forged, 'wrong password')).statusCode).toBe(400)
      }
      expect((await grant(server.app, '192.0.2.3, 203.0.113.7', PASSWORD)).statusCode).toBe(429)
      // everyone else behind the same proxy is served
      expect((await grant(server.app, '198.51.100.9', PASSWORD)).statusCode).toBe(200)
    } finally {
      await server.close()
    }
  })

  it('without a trusted proxy, X-Forwarded-For is ignored (a client cannot pick a fresh address)', async () => {
    const server = await startServer(
      { throttle: { accountLimit: 100, ipLimit: 3, windowSeconds: 60 } },
      { listen: false },
    )
    try {
      await seed(server.db, server.settings.secretKey)
      for (const forged of ['203.0.113.7', '203.0.113.8', '203.0.113.9']) {
        expect((await grant(server.app, forged, 'wrong password')).statusCode).toBe(400)
      }
      expect((await grant(server.app, '198.51.100.9', PASSWORD)).statusCode).toBe(429)
    } finally {
      await server.close()
    }
  })
})
