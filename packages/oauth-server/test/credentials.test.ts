/**
 * The one credential check: every way of proving who one is (the sign-in page, the second
 * factor, the password grant, the password asked again) counts failures against the same
 * account; only a completed sign-in clears them.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPassword, checkSecondFactor, completeSignIn, confirmPassword } from '../src/credentials.ts'
import { totp } from '../src/domain/totp.ts'
import type { OAuthApp } from '../src/oauth-app.ts'
import { memoryThrottle, type Throttle } from '../src/throttle.ts'
import { PASSWORD, seed, startServer, type TestServer } from './helpers.ts'

const IP = '192.0.2.10'

describe('credentials', () => {
  let server: TestServer
  let data: Awaited<ReturnType<typeof seed>>
  let throttle: Throttle
  const services = () => ({ db: server.db, throttle, settings: server.settings, audit: (server.app as OAuthApp).audit })

  beforeAll(async () => {
    server = await startServer({}, { listen: false })
    data = await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => server?.close())

  const fresh = () => {
    throttle = memoryThrottle({ accountLimit: 3, ipLimit: 100, windowSeconds: 60 })
  }
  const page = (login: string, password: string) =>
    checkPassword(services(), { login, password, ip: IP, twoFactor: 'next-step' })

  it('failures by username, by email, at the password grant and on re-confirmation count for one account', async () => {
    fresh()
    expect(await page('alice', 'wrong')).toEqual({ outcome: 'refused' })
    expect(
      await checkPassword(services(), { login: 'ALICE@example.org', password: 'x', ip: IP, twoFactor: 'refuse' }),
    ).toEqual({ outcome: 'refused' })
    expect(await confirmPassword(services(), data.alice, 'wrong', IP)).toEqual({ outcome: 'refused' })
    const blocked = await page('alice', PASSWORD)
    expect(blocked.outcome).toBe('throttled')
  })

  it('an unknown login is refused and counted like a wrong password', async () => {
    fresh()
    for (let i = 0; i < 3; i++) expect(await page('nobody', 'x')).toEqual({ outcome: 'refused' })
    expect((await page('NOBODY', 'x')).outcome).toBe('throttled')
  })

  it('the right password alone does not clear the counter: a second factor or a lock still stands in the way', async () => {
    fresh()
    await page('bob', 'wrong')
    await page('bob', 'wrong')
    const second = await page('bob', PASSWORD)
    expect(second.outcome).toBe('second_factor')
    // the count is still 2: one more failure blocks
    expect(await checkSecondFactor(services(), data.bob, '000000', IP)).toEqual({ outcome: 'refused' })
    expect((await checkSecondFactor(services(), data.bob, totp(data.bob.otpSecret), IP)).outcome).toBe('throttled')
  })

  it('the password grant refuses an account with two-factor authentication without checking its password, counted like a wrong one (nothing tells it has a second factor)', async () => {
    fresh()
    for (let i = 0; i < 3; i++) {
      const check = await checkPassword(services(), { login: 'bob', password: PASSWORD, ip: IP, twoFactor: 'refuse' })
      expect(check).toEqual({ outcome: 'refused' })
    }
    // as for any account past the limit
    const fourth = await checkPassword(services(), { login: 'bob', password: PASSWORD, ip: IP, twoFactor: 'refuse' })
    expect(fourth.outcome).toBe('throttled')
  })

  it('a completed sign-in clears the account counter', async () => {
    fresh()
    await page('alice', 'wrong')
    await page('alice', 'wrong')
    const accepted = await page('alice', PASSWORD)
    if (accepted.outcome !== 'accepted') throw new Error(accepted.outcome)
    await completeSignIn(services(), accepted.user, IP, 'password')
    await page('alice', 'wrong')
    await page('alice', 'wrong')
    expect((await page('alice', PASSWORD)).outcome).toBe('accepted')
  })
})
