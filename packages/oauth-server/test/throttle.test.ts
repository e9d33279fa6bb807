import { randomBytes } from 'node:crypto'
import { needsService } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication, createUser } from '../src/accounts.ts'
import { totp } from '../src/domain/totp.ts'
import { memoryThrottle, redisThrottle, type Throttle } from '../src/throttle.ts'
import { Browser, formFields, PASSWORD, postForm, seed, startServer, type TestServer } from './helpers.ts'
import { getPage, signedIn, submit } from './pages-helpers.ts'

const limits = { accountLimit: 2, ipLimit: 3, windowSeconds: 30 }
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
const redisUp = await needsService('Redis throttle test', 'REDIS_URL')

async function behaves(throttle: Throttle) {
  expect(await throttle.attempt('alice', '10.0.0.1')).toBeUndefined()
  expect(await throttle.attempt('Alice', '10.0.0.2')).toBeUndefined()
  // account limit reached (names compare case-insensitively), from any IP: nothing more is checked
  const wait = await throttle.attempt('alice', '10.0.0.9')
  expect(wait).toBeGreaterThan(0)
  expect(wait).toBeLessThanOrEqual(30)
  await throttle.succeeded('alice')
  expect(await throttle.attempt('alice', '10.0.0.9')).toBeUndefined()
  // an attempt that was right is given back: it counts nothing
  for (let i = 0; i < 5; i++) {
    expect(await throttle.attempt('erin', '10.0.0.5')).toBeUndefined()
    await throttle.refund('erin', '10.0.0.5')
  }
  // IP limit: three attempts from one IP block every account from it
  for (const name of ['b', 'c', 'd']) expect(await throttle.attempt(name, '10.0.0.3')).toBeUndefined()
  expect(await throttle.attempt('zed', '10.0.0.3')).toBeGreaterThan(0)
  expect(await throttle.attempt('zed', '10.0.0.4')).toBeUndefined()
  // attempts arriving together are counted one by one: the limit's worth get through, no more
  const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => throttle.attempt('frank', `10.0.1.${i}`)))
  expect(burst.filter((w) => w === undefined)).toHaveLength(2)
}

describe('attempt limits per account and per IP, counted before the check', () => {
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

/**
 * A burst of simultaneous guesses gets no more checks than the limit: each attempt is counted
 * before its secret is checked (an argon2 verification takes long enough for a burst to pass a
 * check-then-count limit entirely).
 */
describe('attempt limits hold under a burst of simultaneous guesses', () => {
  const LIMIT = 10
  let server: TestServer
  let fixtures: Awaited<ReturnType<typeof seed>>
  beforeAll(async () => {
    server = await startServer({ throttle: { accountLimit: LIMIT, ipLimit: 10_000, windowSeconds: 60 } })
    fixtures = await seed(server.db, server.settings.secretKey)
    await createUser(server.db, { username: 'dave', password: PASSWORD })
  })
  afterAll(async () => server?.close())

  const tally = (statuses: number[]) => ({
    checked: statuses.filter((s) => s !== 429).length,
    throttled: statuses.filter((s) => s === 429).length,
  })

  it('password grant: 40 at once with the right password last, at most the limit checked and the right one refused', async () => {
    const grant = (password: string) =>
      postForm(server.url, '/oauth/token', { grant_type: 'password', username: 'alice', password })
    const wrong = Array.from({ length: 39 }, (_, i) => grant(`wrong password ${i}`))
    const right = grant(PASSWORD)
    const answers = await Promise.all([...wrong, right])
    const { checked, throttled } = tally(answers.map((a) => a.status))
    expect(checked).toBeLessThanOrEqual(LIMIT)
    expect(throttled).toBeGreaterThanOrEqual(40 - LIMIT)
    // the right password reached no check: refused like the rest once the limit was reached
    const last = answers[answers.length - 1]!
    expect([last.status, last.body.error]).toEqual([429, 'temporarily_unavailable'])
  })

  it('sign-in page: 80 posts at once, at most the limit checked', async () => {
    const browser = new Browser(server.url)
    const fields = formFields(await (await browser.request('/users/sign_in')).text())
    const answers = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        browser.request('/users/sign_in', { form: { ...fields, username: 'carol', password: `guess ${i}` } }),
      ),
    )
    const { checked } = tally(answers.map((a) => a.status))
    expect(checked).toBeLessThanOrEqual(LIMIT)
  })

  it('an account with a second factor meets the same limit through the password grant (nothing tells it has one)', async () => {
    const grant = (password: string) =>
      postForm(server.url, '/oauth/token', { grant_type: 'password', username: 'bob', password })
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => grant(`wrong ${i}`)))
    const { checked, throttled } = tally(answers.map((a) => a.status))
    expect(checked).toBe(LIMIT)
    expect(throttled).toBe(20 - LIMIT)
    expect(fixtures.bob.otpSecret).toBeTruthy()
  })

  it('device user codes: 100 guesses at once, at most the limit checked', async () => {
    const browser = await signedIn(server.url, 'dave', PASSWORD)
    const form = await getPage(browser, '/oauth/device')
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        submit(browser, '/oauth/device', { csrf_token: form.csrf, user_code: `WXYZ-${String(i).padStart(4, '0')}` }),
      ),
    )
    const { checked, throttled } = tally(answers.map((a) => a.status))
    expect(checked).toBeLessThanOrEqual(LIMIT)
    expect(throttled).toBeGreaterThanOrEqual(100 - LIMIT)
  })
})

describe('what an anonymous caller may make per address and window', () => {
  it('sessions (cookieless sign-in or sign-up pages) and device authorizations stop at the limit, with 429 and Retry-After', async () => {
    const server = await startServer({
      signupEnabled: true,
      throttle: { accountLimit: 10, ipLimit: 50, windowSeconds: 60, anonymousLimit: 5 },
    })
    try {
      await seed(server.db, server.settings.secretKey)
      const { application } = await createApplication(server.db, {
        name: 'Device',
        redirectUris: ['http://127.0.0.1/cb'],
        scopes: ['read_user'],
        confidential: false,
        grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'],
      })
      const visitor = new Browser(server.url)
      expect((await visitor.request('/users/sign_in')).status).toBe(200)
      const pages = await Promise.all(Array.from({ length: 7 }, () => fetch(`${server.url}/users/sign_in`)))
      expect(pages.map((p) => p.status).sort()).toEqual([200, 200, 200, 200, 429, 429, 429])
      const refused = pages.find((p) => p.status === 429)
      expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0)
      const sessions = await server.db.selectFrom('sessions').select('id_digest').execute()
      expect(sessions).toHaveLength(5)
      // the same address, the same count: sign-up pages and device grants meet the limit too
      expect((await fetch(`${server.url}/users/sign_up`)).status).toBe(429)
      const device = await postForm(server.url, '/oauth/authorize_device', { client_id: application.uid })
      expect([device.status, device.body.error]).toEqual([429, 'temporarily_unavailable'])
      // a browser that has its session makes nothing new: it is not counted
      expect((await visitor.request('/users/sign_in')).status).toBe(200)
      // but each sign-up it posts (a password hashed, perhaps an account made) is
      const form = formFields(await (await visitor.request('/users/sign_in')).text())
      const signUp = await visitor.request('/users/sign_up', {
        form: {
          csrf_token: form.csrf_token as string,
          username: 'newbie',
          email: 'n@example.org',
          name: 'N',
          password: 'long enough password',
        },
      })
      expect(signUp.status).toBe(429)
    } finally {
      await server.close()
    }
  })
})
