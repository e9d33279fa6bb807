/**
 * Two-factor authentication over HTTP: enrolment with a QR code and the manual key, confirmation
 * by code, recovery codes shown once and each good once at sign-in, disabling with the password.
 * Also sign-in by email and sign-out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../../src/accounts.ts'
import { totp } from '../../src/domain/totp.ts'
import { Browser, formFields, PASSWORD, seed, startServer, type TestServer } from '../helpers.ts'
import { bearer, getPage, signedIn, submit } from '../pages-helpers.ts'

const PATH = '/profile/two_factor_auth'

describe('/profile/two_factor_auth and the sign-in steps', () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer()
    await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => {
    await server?.close()
  })

  /** Password step, then the second-factor form with `attempt`; returns where it leads. */
  async function signInWith(login: string, attempt: string) {
    const browser = new Browser(server.url)
    const form = await getPage(browser, '/users/sign_in')
    const first = await submit(browser, '/users/sign_in', {
      csrf_token: form.csrf,
      username: login,
      password: PASSWORD,
    })
    expect(first.location).toMatch(/^\/users\/two_factor/)
    const second = await getPage(browser, first.location as string)
    expect(second.html).toContain('or one of your recovery codes')
    return submit(browser, '/users/two_factor', { ...formFields(second.html), otp_attempt: attempt })
  }

  it('signs in by email as well as by username, and signs out with a POST', async () => {
    const browser = await signedIn(server.url, 'ALICE@example.org', PASSWORD)
    const page = await getPage(browser, '/profile/applications')
    expect(page.html).toContain('Signed in as <strong>alice</strong>')
    const cookie = [...browser.cookies.keys()][0] as string
    const out = await submit(browser, '/users/sign_out', { csrf_token: page.csrf })
    expect(out).toMatchObject({ status: 303, location: '/users/sign_in' })
    expect(browser.cookies.has(cookie)).toBe(false)
    expect((await browser.request('/profile/applications')).status).toBe(302)
  })

  it('sets the session cookie HttpOnly and SameSite=Lax, and keeps the session in the database', async () => {
    const browser = new Browser(server.url)
    const form = await browser.request('/users/sign_in')
    const line = form.headers.getSetCookie()[0] as string
    expect(line).toMatch(/HttpOnly/i)
    expect(line).toMatch(/SameSite=Lax/i)
    expect(line).toMatch(/Max-Age=\d+/i)
    const sessions = await server.db.selectFrom('sessions').select('expires_at').execute()
    expect(sessions.length).toBeGreaterThan(0)
  })

  it('marks the session cookie Secure (and __Host-) when the issuer is https', async () => {
    const tls = await startServer({ issuer: 'https://auth.example' }, { listen: false })
    try {
      const res = await tls.app.inject({ method: 'GET', url: '/users/sign_in' })
      const line = String(res.headers['set-cookie'])
      expect(line).toMatch(/^__Host-campus_session=/)
      expect(line).toMatch(/; Secure/i)
      expect(line).toMatch(/HttpOnly/i)
    } finally {
      await tls.close()
    }
  })

  it('two-factor changes reach cached token lookups at once (the API shows them on the next call)', async () => {
    const { issueToken } = await import('../helpers.ts')
    const { user } = await createUser(server.db, { username: 'carol', password: PASSWORD })
    const token = await issueToken(server, { applicationId: null, userId: user.id, scopes: ['read_user'] })
    const me = async () =>
      (await (await bearer(server.url, token.access_token)).json()) as { two_factor_enabled: boolean }
    expect((await me()).two_factor_enabled).toBe(false)
    const browser = await signedIn(server.url, 'carol', PASSWORD)
    const enrol = await getPage(browser, PATH)
    const secret = (/id="otp-secret">([A-Z2-7 ]+)</.exec(enrol.html)?.[1] ?? '').replace(/ /g, '')
    expect((await submit(browser, PATH, { csrf_token: enrol.csrf, otp_code: totp(secret) })).status).toBe(303)
    expect((await me()).two_factor_enabled).toBe(true)
    const page = await getPage(browser, PATH)
    await submit(browser, `${PATH}/disable`, { csrf_token: page.csrf, current_password: PASSWORD })
    expect((await me()).two_factor_enabled).toBe(false)
  })

  it('enables TOTP with a QR code and a code, shows recovery codes once, each good once; disables with the password', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const enrol = await getPage(browser, PATH)
    expect(enrol.html).toContain('Two-factor authentication is <strong>off</strong>')
    expect(enrol.html).toMatch(/<div class="qr" role="img" aria-label="[^"]+"><svg [^>]*viewBox=/)
    const secret = (/id="otp-secret">([A-Z2-7 ]+)</.exec(enrol.html)?.[1] ?? '').replace(/ /g, '')
    expect(secret).toHaveLength(32)
    expect(enrol.html).toContain(`otpauth://totp/`)
    // the same key survives a reload until confirmed
    expect((await getPage(browser, PATH)).html).toContain(secret.slice(0, 4))

    const wrong = await submit(browser, PATH, {
      csrf_token: enrol.csrf,
      otp_code: '000000' === totp(secret) ? '111111' : '000000',
    })
    expect(wrong.status).toBe(422)
    expect(wrong.html).toContain('The code is not valid.')

    const confirmed = await submit(browser, PATH, { csrf_token: enrol.csrf, otp_code: totp(secret) })
    expect(confirmed).toMatchObject({ status: 303, location: PATH })
    const shown = await getPage(browser, PATH)
    const codes = [...shown.html.matchAll(/<li><code>([a-z2-7-]{19})<\/code><\/li>/g)].map((m) => m[1] as string)
    expect(codes).toHaveLength(10)
    expect(shown.html).toContain('You have 10 unused recovery codes.')
    const reload = await getPage(browser, PATH)
    expect(reload.html).not.toContain(codes[0] as string)
    // stored only as digests
    const stored = await server.db.selectFrom('recovery_codes').selectAll().execute()
    expect(JSON.stringify(stored)).not.toContain((codes[0] as string).replace(/-/g, ''))

    // a recovery code signs in once (dashes and case do not matter), then never again
    const first = await signInWith('alice', (codes[0] as string).toUpperCase())
    expect(first).toMatchObject({ status: 303, location: '/profile' })
    const replay = await signInWith('alice', codes[0] as string)
    expect(replay.location).toMatch(/^\/users\/two_factor\?.*error=otp/)
    const second = await signInWith('alice', (codes[1] as string).replace(/-/g, ''))
    expect(second).toMatchObject({ status: 303, location: '/profile' })
    expect((await getPage(browser, PATH)).html).toContain('You have 8 unused recovery codes.')

    // disabling needs the password
    const page = await getPage(browser, PATH)
    const refused = await submit(browser, `${PATH}/disable`, {
      csrf_token: page.csrf,
      current_password: 'wrong password',
    })
    expect(refused.status).toBe(422)
    expect(refused.html).toContain('The password is not correct.')
    expect((await submit(browser, `${PATH}/disable`, { current_password: PASSWORD })).status).toBe(403)
    const disabled = await submit(browser, `${PATH}/disable`, { csrf_token: page.csrf, current_password: PASSWORD })
    expect(disabled).toMatchObject({ status: 303, location: PATH })
    expect((await getPage(browser, PATH)).html).toContain('Two-factor authentication is <strong>off</strong>')
    expect(await server.db.selectFrom('recovery_codes').selectAll().execute()).toHaveLength(0)
    // back to password only
    const plain = await signedIn(server.url, 'alice', PASSWORD)
    expect(plain.cookies.size).toBe(1)
  })
})
