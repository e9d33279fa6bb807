/**
 * Two oauth-server processes on one PostgreSQL database and one Redis, as behind a load
 * balancer: codes, sessions, throttling and revocations are shared, revocations at once.
 */
import { createHash } from 'node:crypto'
import type { RunningService } from '@campus/shared'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createUser } from '../../src/accounts.ts'
import type { OAuthDB } from '../../src/db/schema.ts'
import { oauthService } from '../../src/service.ts'
import { authorizeInBrowser, Browser, basic, exchangeCode, formFields, PASSWORD, postForm, seed } from '../helpers.ts'
import { onPostgresServer, sharedDeployment, startOAuthProcess } from './processes.ts'

type Seeded = Awaited<ReturnType<typeof seed>>

onPostgresServer('two instances on one database and one Redis', () => {
  let database: TestDatabase<OAuthDB>
  let a: RunningService
  let b: RunningService
  /** Same deployment without OAUTH_CACHE_SYNC (the default). */
  let c: RunningService
  let data: Seeded
  const deployment = sharedDeployment()

  beforeAll(async () => {
    database = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
    const key = createHash('sha256')
      .update(deployment.OAUTH_SECRET_KEY as string)
      .digest()
    data = await seed(database.db, key)
    const env = {
      ...deployment,
      OAUTH_THROTTLE_ACCOUNT_LIMIT: '4',
      OAUTH_THROTTLE_IP_LIMIT: '12',
      OAUTH_THROTTLE_WINDOW_SECONDS: '300',
      // long enough that only invalidation, never expiry, can explain a fresh answer
      OAUTH_TOKEN_CACHE_SECONDS: '60',
    }
    const strict = { ...env, OAUTH_CACHE_SYNC: 'true' }
    ;[a, b, c] = await Promise.all([
      startOAuthProcess(database.url, strict),
      startOAuthProcess(database.url, strict),
      startOAuthProcess(database.url, env),
    ])
  })

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), c?.stop()])
    await database?.close()
  })

  const auth = () => ({ authorization: basic(data.web.uid, data.web.secret) })
  const user = (base: string, token: string) =>
    fetch(new URL('/api/v4/user', base), { headers: { authorization: `Bearer ${token}` } })

  it('redeems at one instance a code issued by the other, and a session signed in at one works at the other', async () => {
    const browserA = new Browser(a.url)
    const redirectUri = 'https://client.example/cb'
    const query = new URLSearchParams({
      client_id: data.web.uid,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'api',
      state: 's1',
    })
    const back = new URL(
      await authorizeInBrowser(browserA, `/oauth/authorize?${query}`, { username: 'alice', password: PASSWORD }),
    )
    const code = back.searchParams.get('code') as string
    expect(code).toBeTruthy()
    const token = await exchangeCode(b.url, code, redirectUri, auth())
    expect(token.status).toBe(200)
    expect((await user(a.url, token.body.access_token as string)).status).toBe(200)

    // the sign-in cookie of instance A, presented to instance B: no sign-in page, straight back
    const browserB = new Browser(b.url)
    for (const [name, value] of browserA.cookies) browserB.cookies.set(name, value)
    const again = await browserB.request(`/oauth/authorize?${query}`)
    expect(again.status).toBe(302)
    const location = new URL(again.headers.get('location') as string)
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri)
    expect(location.searchParams.get('code')).toBeTruthy()
  })

  it('counts failed sign-ins across both instances, per account and per IP, with Retry-After', async () => {
    await createUser(database.db, { username: 'carol', password: PASSWORD })
    const attempt = (base: string, username: string) =>
      postForm(base, '/oauth/token', { grant_type: 'password', username, password: 'wrong password' }, auth())
    // 4 failures for carol, alternating instances: the account limit
    for (const base of [a.url, b.url, a.url, b.url]) expect((await attempt(base, 'carol')).status).toBe(400)
    for (const base of [a.url, b.url]) {
      const blocked = await attempt(base, 'carol')
      expect(blocked.status).toBe(429)
      expect(blocked.body.error).toBe('temporarily_unavailable')
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
    }
    // even the right password waits now, and the sign-in page at the other instance agrees
    const right = await postForm(
      a.url,
      '/oauth/token',
      { grant_type: 'password', username: 'carol', password: PASSWORD },
      auth(),
    )
    expect(right.status).toBe(429)
    const page = new Browser(b.url)
    const form = formFields(await (await page.request('/users/sign_in')).text())
    const signIn = await page.request('/users/sign_in', { form: { ...form, username: 'carol', password: PASSWORD } })
    expect(signIn.status).toBe(429)
    expect(Number(signIn.headers.get('retry-after'))).toBeGreaterThan(0)

    // the IP limit (12): 4 so far from carol, 8 more spread over other names and both instances
    const names = ['dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy', 'mallory']
    for (const [i, name] of names.entries()) {
      expect((await attempt(i % 2 ? a.url : b.url, name)).status).toBe(400)
    }
    for (const base of [a.url, b.url]) {
      const blocked = await attempt(base, 'nobody-else')
      expect(blocked.status).toBe(429)
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
    }
  })

  it('with OAUTH_CACHE_SYNC, sees a revocation or rotation made at one instance at once at the other, though it cached the token', async () => {
    // the throttle above blocked this IP; the password grant is not needed here: codes are
    const { issueCode } = await import('./direct.ts')
    for (let round = 0; round < 10; round++) {
      const token = await issueCode(database, data, b.url)
      // cached at B (two calls: the first fills the cache)
      expect((await user(b.url, token.access_token)).status).toBe(200)
      expect((await user(b.url, token.access_token)).status).toBe(200)
      if (round % 2 === 0) {
        const revoked = await postForm(a.url, '/oauth/revoke', { token: token.access_token }, auth())
        expect(revoked.status).toBe(200)
      } else {
        const refreshed = await postForm(
          a.url,
          '/oauth/token',
          { grant_type: 'refresh_token', refresh_token: token.refresh_token },
          auth(),
        )
        expect(refreshed.status).toBe(200)
      }
      const after = await user(b.url, token.access_token)
      expect(after.status).toBe(401)
    }
  })

  it('by default, drops a cached token revoked at another instance on the notification, long before the cache lifetime', async () => {
    const { issueCode } = await import('./direct.ts')
    for (let round = 0; round < 5; round++) {
      const token = await issueCode(database, data, c.url)
      expect((await user(c.url, token.access_token)).status).toBe(200)
      expect((await user(c.url, token.access_token)).status).toBe(200)
      expect((await postForm(a.url, '/oauth/revoke', { token: token.access_token }, auth())).status).toBe(200)
      // the notification is delivered asynchronously (well under a millisecond on loopback);
      // the cached entry would otherwise live 60 s
      const deadline = Date.now() + 1000
      let status = (await user(c.url, token.access_token)).status
      while (status === 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 5))
        status = (await user(c.url, token.access_token)).status
      }
      expect(status).toBe(401)
    }
  })
})
