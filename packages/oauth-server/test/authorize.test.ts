import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication, createUser } from '../src/accounts.ts'
import { buildApp } from '../src/app.ts'
import { defaultSettings } from '../src/config.ts'
import { totp } from '../src/domain/totp.ts'
import { authorizeInBrowser, Browser, formFields, PASSWORD, seed, startServer, type TestServer } from './helpers.ts'

let server: TestServer
let f: Awaited<ReturnType<typeof seed>>

beforeAll(async () => {
  server = await startServer()
  f = await seed(server.db, server.settings.secretKey)
})
afterAll(async () => {
  await server?.close()
})

const CB = 'https://client.example/cb'
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

function authorize(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined) search.set(k, v)
  return `/oauth/authorize?${search.toString()}`
}

const alice = { username: 'alice', password: PASSWORD }

/** A browser already signed in as alice (no consent recorded yet). */
async function signedIn(): Promise<Browser> {
  const browser = new Browser(server.url)
  const page = await browser.request('/users/sign_in?return_to=/profile')
  const fields = formFields(await page.text())
  const res = await browser.request('/users/sign_in', { form: { ...fields, ...alice } })
  expect(res.status).toBe(303)
  return browser
}

function errorOf(location: string | null, fragment = false): URLSearchParams {
  const url = new URL(location as string)
  return fragment ? new URLSearchParams(url.hash.slice(1)) : url.searchParams
}

describe('RFC 6749 4.1.2.1 / RFC 9700 4.1: invalid client or redirect URI shows a page, never redirects', () => {
  const cases: Array<[string, Record<string, string | undefined>]> = [
    ['unknown client_id', { client_id: 'nope', redirect_uri: CB, response_type: 'code' }],
    ['missing client_id', { redirect_uri: CB, response_type: 'code' }],
    ['missing redirect_uri', { client_id: 'WEB', response_type: 'code' }],
    ['unregistered redirect_uri', { client_id: 'WEB', redirect_uri: 'https://evil.example/cb', response_type: 'code' }],
    ['redirect_uri with an extra path', { client_id: 'WEB', redirect_uri: `${CB}/x`, response_type: 'code' }],
    ['redirect_uri with a query added', { client_id: 'WEB', redirect_uri: `${CB}?a=1`, response_type: 'code' }],
    [
      'redirect_uri with another port (not loopback)',
      { client_id: 'WEB', redirect_uri: 'https://client.example:8443/cb', response_type: 'code' },
    ],
    [
      'redirect_uri with another case',
      { client_id: 'WEB', redirect_uri: 'https://CLIENT.example/cb', response_type: 'code' },
    ],
  ]
  for (const [name, params] of cases) {
    it(name, async () => {
      const browser = await signedIn()
      const resolved = { ...params, client_id: params.client_id === 'WEB' ? f.web.uid : params.client_id }
      const res = await browser.request(authorize(resolved))
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
      expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    })
  }
})

describe('RFC 9700 4.11.2: the server is no open redirector', () => {
  it("errors of a user's own application are shown on a page, not redirected", async () => {
    // anyone may register an application with a redirect URI of their choosing
    const { application } = await createApplication(server.db, {
      name: 'Self-registered',
      redirectUris: ['https://phish.example/landing'],
      scopes: ['read_user'],
      ownerId: f.alice.id,
    })
    for (const browser of [new Browser(server.url), await signedIn()]) {
      for (const params of [
        { response_type: 'x' },
        { response_type: 'code', scope: 'sudo' },
        { response_type: 'code', code_challenge_method: 'plain' },
      ]) {
        const res = await browser.request(
          authorize({ client_id: application.uid, redirect_uri: 'https://phish.example/landing', ...params }),
        )
        expect(res.headers.get('location')).toBeNull()
        expect(res.status).toBe(400)
        const page = await res.text()
        expect(page).toContain('Self-registered')
        // the user may still choose to go back, knowing where to
        expect(page).toContain('phish.example')
      }
    }
  })
})

describe('a loopback redirect URI with a port out of range', () => {
  it('is refused on the error page, never a 500', async () => {
    const browser = await signedIn()
    for (const port of ['99999', '65536', '123456']) {
      const res = await browser.request(
        authorize({ client_id: f.web.uid, redirect_uri: `http://127.0.0.1:${port}/loopback`, response_type: 'code' }),
      )
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
      expect(await res.text()).toContain('The redirect_uri is not registered for this application.')
    }
  })
})

describe('RFC 8252 7.3: loopback redirect URIs may use any port', () => {
  it('a registered http://127.0.0.1/loopback accepts http://127.0.0.1:49152/loopback', async () => {
    const browser = await signedIn()
    const location = await authorizeInBrowser(
      browser,
      authorize({
        client_id: f.web.uid,
        redirect_uri: 'http://127.0.0.1:49152/loopback',
        response_type: 'code',
        state: 's',
      }),
      alice,
    )
    expect(location.startsWith('http://127.0.0.1:49152/loopback?code=')).toBe(true)
  })
})

describe('RFC 6749 4.1.2.1 / 4.2.2.1: errors go back to a valid redirect URI with state and iss', () => {
  async function errorFor(params: Record<string, string | undefined>, fragment = false) {
    const browser = await signedIn()
    const res = await browser.request(authorize({ client_id: f.web.uid, redirect_uri: CB, state: 'xyz', ...params }))
    expect(res.status).toBe(302)
    const location = res.headers.get('location') as string
    expect(location.startsWith(CB)).toBe(true)
    const p = errorOf(location, fragment)
    expect(p.get('state')).toBe('xyz')
    expect(p.get('iss')).toBe(server.url)
    return p.get('error')
  }

  it('invalid_request: response_type missing', async () => {
    expect(await errorFor({})).toBe('invalid_request')
  })
  it('unsupported_response_type: response_type=id_token', async () => {
    expect(await errorFor({ response_type: 'id_token' })).toBe('unsupported_response_type')
  })
  it('invalid_scope: unknown scope', async () => {
    expect(await errorFor({ response_type: 'code', scope: 'sudo' })).toBe('invalid_scope')
  })
  it('invalid_scope in the fragment for response_type=token', async () => {
    expect(await errorFor({ response_type: 'token', scope: 'sudo' }, true)).toBe('invalid_scope')
  })
  it('invalid_request: a parameter repeated', async () => {
    const browser = await signedIn()
    const res = await browser.request(
      `${authorize({ client_id: f.web.uid, redirect_uri: CB, response_type: 'code' })}&scope=api&scope=read_user`,
    )
    expect(errorOf(res.headers.get('location')).get('error')).toBe('invalid_request')
  })
  it('unauthorized_client: the application may not use the implicit grant', async () => {
    const { application } = await createApplication(server.db, {
      name: 'No implicit',
      redirectUris: [CB],
      scopes: ['read_user'],
      grantTypes: ['authorization_code'],
    })
    const browser = await signedIn()
    const res = await browser.request(
      authorize({ client_id: application.uid, redirect_uri: CB, response_type: 'token' }),
    )
    expect(errorOf(res.headers.get('location'), true).get('error')).toBe('unauthorized_client')
  })
  it('unsupported_response_type: the implicit grant switched off on the server', async () => {
    const app = await buildApp({
      database: server.database,
      settings: defaultSettings({ implicitGrant: false }),
    })
    const res = await app.inject(
      authorize({ client_id: f.web.uid, redirect_uri: CB, response_type: 'token', state: 's' }),
    )
    await app.close()
    expect(res.statusCode).toBe(302)
    expect(errorOf(res.headers.location as string, true).get('error')).toBe('unsupported_response_type')
  })
})

describe('RFC 7636 4.4.1 / RFC 9700 2.1.1: PKCE at the authorization endpoint', () => {
  async function errorFor(params: Record<string, string | undefined>) {
    const browser = await signedIn()
    const res = await browser.request(
      authorize({
        redirect_uri: 'https://spa.example/cb',
        client_id: f.spa.uid,
        response_type: 'code',
        scope: 'read_user',
        ...params,
      }),
    )
    expect(res.status).toBe(302)
    return errorOf(res.headers.get('location')).get('error')
  }
  it('invalid_request: a public client without code_challenge', async () => {
    expect(await errorFor({})).toBe('invalid_request')
  })
  it('invalid_request: code_challenge_method=plain is refused', async () => {
    expect(await errorFor({ code_challenge: CHALLENGE, code_challenge_method: 'plain' })).toBe('invalid_request')
  })
  it('invalid_request: no method means plain, refused', async () => {
    expect(await errorFor({ code_challenge: CHALLENGE })).toBe('invalid_request')
  })
  it('invalid_request: a malformed challenge', async () => {
    expect(await errorFor({ code_challenge: 'short', code_challenge_method: 'S256' })).toBe('invalid_request')
  })
})

describe("RFC 6749 3.3: a request without scope gets GitLab's default scope", () => {
  it("api, when the application has it; invalid_scope when it has not (Doorkeeper's default_scopes)", async () => {
    const { application } = await createApplication(server.db, {
      name: 'Default scope',
      redirectUris: [CB],
      scopes: ['read_user', 'api', 'openid'],
    })
    const browser = await signedIn()
    const wide = await browser.request(
      authorize({ client_id: application.uid, redirect_uri: CB, response_type: 'code' }),
    )
    expect(wide.status).toBe(200)
    expect(formFields(await wide.text()).scope).toBe('api')
    const narrow = await browser.request(
      authorize({ client_id: f.spa.uid, redirect_uri: 'https://spa.example/cb', response_type: 'token', state: 'n' }),
    )
    expect(narrow.status).toBe(302)
    expect(errorOf(narrow.headers.get('location'), true).get('error')).toBe('invalid_scope')
  })
})

describe('RFC 6749 4.1.2 / RFC 9207: the response carries code, state and iss; deny gives access_denied', () => {
  it('approve: code, state and iss in the query; the consent is remembered for the same scopes', async () => {
    const { application } = await createApplication(server.db, {
      name: 'Web App',
      redirectUris: [CB],
      scopes: ['api', 'read_user'],
    })
    const browser = await signedIn()
    const url = authorize({
      client_id: application.uid,
      redirect_uri: CB,
      response_type: 'code',
      scope: 'read_user',
      state: 'st',
    })
    const first = await browser.request(url)
    expect(first.status).toBe(200)
    const page = await first.text()
    expect(page).toContain('Web App')
    expect(page).toContain('read_user')
    const fields = formFields(page)
    const approved = await browser.request('/oauth/authorize', { form: { ...fields, decision: 'approve' } })
    expect(approved.status).toBe(303)
    const params = errorOf(approved.headers.get('location'))
    expect(params.get('code')).toMatch(/^cmpc_/)
    expect(params.get('state')).toBe('st')
    expect(params.get('iss')).toBe(server.url)
    // an earlier identical consent: straight back to the client
    const again = await browser.request(url)
    expect(again.status).toBe(302)
    expect(errorOf(again.headers.get('location')).get('code')).toMatch(/^cmpc_/)
    // wider scopes ask again
    const wider = await browser.request(
      authorize({ client_id: application.uid, redirect_uri: CB, response_type: 'code', scope: 'api' }),
    )
    expect(wider.status).toBe(200)
  })

  it('a public client is asked for consent every time (RFC 8252 8.6: its identity cannot be proven)', async () => {
    const { application } = await createApplication(server.db, {
      name: 'Native App',
      redirectUris: ['http://127.0.0.1/cb'],
      scopes: ['read_user'],
      confidential: false,
    })
    const browser = await signedIn()
    const request = (port: number) =>
      authorize({
        client_id: application.uid,
        redirect_uri: `http://127.0.0.1:${port}/cb`,
        response_type: 'code',
        scope: 'read_user',
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
      })
    const first = await browser.request(request(50123))
    expect(first.status).toBe(200)
    const approved = await browser.request('/oauth/authorize', {
      form: { ...formFields(await first.text()), decision: 'approve' },
    })
    expect(errorOf(approved.headers.get('location')).get('code')).toMatch(/^cmpc_/)
    // the same client id on any other loopback port could be any program on the machine: ask again
    for (const port of [50123, 61000]) {
      const again = await browser.request(request(port))
      expect(again.headers.get('location')).toBeNull()
      expect(again.status).toBe(200)
      expect(await again.text()).toContain('Authorize Native App?')
    }
  })

  it('deny: error=access_denied with state (query), 303 after the POST', async () => {
    const browser = await signedIn()
    const page = await browser.request(
      authorize({
        client_id: f.other.uid,
        redirect_uri: 'https://other.example/cb',
        response_type: 'code',
        state: 'd1',
      }),
    )
    const res = await browser.request('/oauth/authorize', {
      form: { ...formFields(await page.text()), decision: 'deny' },
    })
    expect(res.status).toBe(303)
    const p = errorOf(res.headers.get('location'))
    expect(p.get('error')).toBe('access_denied')
    expect(p.get('state')).toBe('d1')
    expect(p.has('code')).toBe(false)
  })

  it('deny for response_type=token: access_denied in the fragment', async () => {
    const browser = await signedIn()
    const page = await browser.request(
      authorize({
        client_id: f.other.uid,
        redirect_uri: 'https://other.example/cb',
        response_type: 'token',
        state: 'd2',
      }),
    )
    const res = await browser.request('/oauth/authorize', {
      form: { ...formFields(await page.text()), decision: 'deny' },
    })
    expect(errorOf(res.headers.get('location'), true).get('error')).toBe('access_denied')
  })

  it('a trusted application skips the consent page', async () => {
    const { application } = await createApplication(server.db, {
      name: 'First party',
      redirectUris: [CB],
      scopes: ['api'],
      trusted: true,
    })
    const browser = await signedIn()
    const res = await browser.request(
      authorize({ client_id: application.uid, redirect_uri: CB, response_type: 'code' }),
    )
    expect(res.status).toBe(302)
    expect(errorOf(res.headers.get('location')).get('code')).toMatch(/^cmpc_/)
  })
})

describe('RFC 9700 4.16 / 4.4: pages resist framing, CSRF and open redirects', () => {
  it('every page sends X-Frame-Options DENY, CSP frame-ancestors none without inline script, no-referrer', async () => {
    const browser = new Browser(server.url)
    const res = await browser.request('/users/sign_in')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const csp = res.headers.get('content-security-policy') as string
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    // the passkey ceremony's scripts, from this server only, and fetches to it only
    expect(csp).toContain("script-src 'self'; connect-src 'self'")
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    const html = await res.text()
    expect([...html.matchAll(/<script[^>]*>/gi)].map((m) => m[0])).toEqual([
      '<script src="/assets/webauthn.js" defer>',
      '<script src="/assets/passkeys.js" defer>',
    ])
    expect(html).not.toMatch(/(src|href)="https?:/i)
    // a page without a passkey ceremony runs no script at all
    const consent = await browser.request('/oauth/authorize?client_id=nope')
    expect(consent.headers.get('content-security-policy')).not.toContain('script-src')
  })

  it('the session cookie is HttpOnly and SameSite=Lax (and Secure with __Host- on an https issuer)', async () => {
    const res = await new Browser(server.url).request('/users/sign_in')
    const cookie = res.headers.getSetCookie()[0] as string
    expect(cookie).toMatch(/HttpOnly/)
    expect(cookie).toMatch(/SameSite=Lax/)
    expect(cookie).not.toMatch(/Secure/)
    const app = await buildApp({
      database: server.database,
      settings: defaultSettings({ issuer: 'https://auth.example' }),
    })
    const secure = await app.inject('/users/sign_in')
    await app.close()
    expect(String(secure.headers['set-cookie'])).toMatch(/^__Host-campus_session=.*Secure/)
  })

  it('a sign-in POST without the CSRF token is refused with 403', async () => {
    const browser = new Browser(server.url)
    await browser.request('/users/sign_in')
    const res = await browser.request('/users/sign_in', { form: { ...alice, return_to: '/profile' } })
    expect(res.status).toBe(403)
    expect(browser.cookies.size).toBe(1)
  })

  it('a consent POST with a wrong CSRF token is refused with 403 and redirects nowhere', async () => {
    const browser = await signedIn()
    const page = await browser.request(
      authorize({ client_id: f.other.uid, redirect_uri: 'https://other.example/cb', response_type: 'code' }),
    )
    const fields = formFields(await page.text())
    const res = await browser.request('/oauth/authorize', {
      form: { ...fields, csrf_token: 'forged', decision: 'approve' },
    })
    expect(res.status).toBe(403)
    expect(res.headers.get('location')).toBeNull()
  })

  it('return_to cannot leave the server after sign-in', async () => {
    const browser = new Browser(server.url)
    const fields = formFields(await (await browser.request('/users/sign_in')).text())
    const res = await browser.request('/users/sign_in', {
      form: { ...fields, ...alice, return_to: 'https://evil.example/' },
    })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/profile')
  })

  it('return_to reaches the Location header percent-encoded, whatever was typed, never as a 500', async () => {
    const cases: Array<[string, string]> = [
      ['/profile/☃', '/profile/%E2%98%83'],
      ['/profile/a b', '/profile/a%20b'],
      ['/profile/../admin/users', '/admin/users'],
      ['/profile/../users/sign_out', '/profile'],
      ['//evil.example/profile', '/profile'],
    ]
    for (const [typed, location] of cases) {
      const browser = new Browser(server.url)
      const fields = formFields(await (await browser.request('/users/sign_in')).text())
      const res = await browser.request('/users/sign_in', { form: { ...fields, ...alice, return_to: typed } })
      expect([typed, res.status, res.headers.get('location')]).toEqual([typed, 303, location])
    }
    // the same through the second factor (an account of its own: a TOTP step is used once)
    const { otpSecret } = await createUser(server.db, {
      username: 'return-to-2fa',
      password: PASSWORD,
      with2fa: true,
      secretKey: server.settings.secretKey,
    })
    const browser = new Browser(server.url)
    const fields = formFields(await (await browser.request('/users/sign_in')).text())
    const first = await browser.request('/users/sign_in', {
      form: { ...fields, username: 'return-to-2fa', password: PASSWORD, return_to: '/profile/☃' },
    })
    expect(first.headers.get('location')).toBe('/users/two_factor?return_to=%2Fprofile%2F%25E2%2598%2583')
    const second = formFields(await (await browser.request(first.headers.get('location') as string)).text())
    const done = await browser.request('/users/two_factor', {
      form: { ...second, otp_attempt: totp(otpSecret as string) },
    })
    expect([done.status, done.headers.get('location')]).toEqual([303, '/profile/%E2%98%83'])
  })

  it('a wrong password goes back to the form with 303 and an error', async () => {
    const browser = new Browser(server.url)
    const fields = formFields(await (await browser.request('/users/sign_in')).text())
    const res = await browser.request('/users/sign_in', {
      form: { ...fields, username: 'alice', password: 'nope nope' },
    })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toMatch(/^\/users\/sign_in\?.*error=invalid/)
  })
})

describe('RFC 6238: two-factor sign-in', () => {
  it('asks for the TOTP code after the password, refuses a wrong code and a reused code', async () => {
    const browser = new Browser(server.url)
    const fields = formFields(await (await browser.request('/users/sign_in')).text())
    const afterPassword = await browser.request('/users/sign_in', {
      form: { ...fields, username: 'bob', password: PASSWORD },
    })
    expect(afterPassword.status).toBe(303)
    expect(afterPassword.headers.get('location')).toMatch(/^\/users\/two_factor/)
    // not signed in yet: the authorization endpoint still sends to sign-in
    const early = await browser.request(authorize({ client_id: f.web.uid, redirect_uri: CB, response_type: 'code' }))
    expect(early.headers.get('location')).toMatch(/^\/users\/sign_in/)

    const otpPage = await browser.request('/users/two_factor?return_to=/profile')
    const otpFields = formFields(await otpPage.text())
    const wrong = await browser.request('/users/two_factor', {
      form: { ...otpFields, otp_attempt: '000000' === totp(f.bob.otpSecret) ? '111111' : '000000' },
    })
    expect(wrong.status).toBe(303)
    expect(wrong.headers.get('location')).toMatch(/error=otp/)
    const code = totp(f.bob.otpSecret)
    const right = await browser.request('/users/two_factor', { form: { ...otpFields, otp_attempt: code } })
    expect(right.status).toBe(303)
    expect(right.headers.get('location')).toBe('/profile')

    // the same code a second time, in another browser: refused
    const other = new Browser(server.url)
    const f2 = formFields(await (await other.request('/users/sign_in')).text())
    await other.request('/users/sign_in', { form: { ...f2, username: 'bob', password: PASSWORD } })
    const f3 = formFields(await (await other.request('/users/two_factor?return_to=/profile')).text())
    const replay = await other.request('/users/two_factor', { form: { ...f3, otp_attempt: code } })
    expect(replay.headers.get('location')).toMatch(/error=otp/)
  })
})

describe('throttled sign-in page (per account)', () => {
  it('answers 429 with Retry-After once the account reached its limit, even with the right password', async () => {
    const limited = await startServer({ throttle: { accountLimit: 2, ipLimit: 100, windowSeconds: 60 } })
    try {
      await seed(limited.db, limited.settings.secretKey)
      const browser = new Browser(limited.url)
      const attempt = async (password: string) => {
        const fields = formFields(await (await browser.request('/users/sign_in')).text())
        return browser.request('/users/sign_in', { form: { ...fields, username: 'alice', password } })
      }
      expect((await attempt('wrong one')).status).toBe(303)
      expect((await attempt('wrong two')).status).toBe(303)
      const blocked = await attempt(PASSWORD)
      expect(blocked.status).toBe(429)
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(blocked.headers.get('x-frame-options')).toBe('DENY')
    } finally {
      await limited.close()
    }
  })
})

describe('RFC 6749 3.1.2: a registered redirect URI with a query keeps it', () => {
  it('adds code, state and iss to the existing query', async () => {
    const withQuery = 'https://client.example/cb?tenant=7'
    const { application } = await createApplication(server.db, {
      name: 'Query redirect',
      redirectUris: [withQuery],
      scopes: ['read_user'],
      trusted: true,
    })
    const browser = await signedIn()
    const res = await browser.request(
      authorize({
        client_id: application.uid,
        redirect_uri: withQuery,
        response_type: 'code',
        scope: 'read_user',
        state: 'q',
      }),
    )
    const location = new URL(res.headers.get('location') as string)
    expect(location.origin + location.pathname).toBe('https://client.example/cb')
    expect(location.searchParams.get('tenant')).toBe('7')
    expect(location.searchParams.get('code')).toMatch(/^cmpc_/)
    expect(location.searchParams.get('state')).toBe('q')
  })
})
