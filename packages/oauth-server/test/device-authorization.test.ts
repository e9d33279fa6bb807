/**
 * RFC 8628, the device authorization grant, where GitLab has it (/oauth/authorize_device, the
 * verification page /oauth/device, the token endpoint's device_code grant), on a listening
 * server with PostgreSQL; the person's side through the pages.
 */
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication, createUser } from '../src/accounts.ts'
import { DEVICE_CODE_GRANT } from '../src/domain/grant-types.ts'
import { digest } from '../src/domain/secrets.ts'
import { memoryThrottle } from '../src/throttle.ts'
import { basic, PASSWORD, postForm, seed, startServer, type TestServer } from './helpers.ts'
import { bearer, getPage, signedIn, submit } from './pages-helpers.ts'

let server: TestServer
let f: Awaited<ReturnType<typeof seed>>
let cli: { id: number; uid: string }

beforeAll(async () => {
  server = await startServer({}, { throttle: memoryThrottle({ accountLimit: 3, ipLimit: 1000, windowSeconds: 900 }) })
  f = await seed(server.db, server.settings.secretKey)
  const created = await createApplication(server.db, {
    name: 'Energy CLI',
    redirectUris: ['http://127.0.0.1/cb'],
    scopes: ['read_energy', 'read_user', 'api'],
    confidential: false,
    grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
  })
  cli = { id: created.application.id, uid: created.application.uid }
})
afterAll(async () => {
  await server?.close()
})

interface Codes {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

const authorizeDevice = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(server.url, '/oauth/authorize_device', form, headers)
const newCodes = async (scope = 'read_energy') =>
  (await authorizeDevice({ client_id: cli.uid, scope })).body as unknown as Codes
const poll = (deviceCode: string, clientId = cli.uid) =>
  postForm(server.url, '/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, client_id: clientId })
/** The interval passed since the last poll (the clock of the database moved back, not the test waiting). */
const intervalPassed = (deviceCode: string) =>
  server.db
    .updateTable('device_grants')
    .set({ last_polled_at: sql<Date>`now() - interval '1 hour'` })
    .where('device_code_digest', '=', digest(deviceCode))
    .execute()

/** A signed-in person enters the code and decides, as on the pages. */
async function decide(userCode: string, decision: 'approve' | 'deny', login = 'alice') {
  const browser = await signedIn(server.url, login, PASSWORD)
  const form = await getPage(browser, `/oauth/device?user_code=${userCode}`)
  expect(form.status).toBe(200)
  expect(form.html).toContain(`value="${userCode}"`)
  const consent = await submit(browser, '/oauth/device', { csrf_token: form.csrf, user_code: userCode })
  expect(consent.status).toBe(200)
  expect(consent.html).toContain('Authorize Energy CLI?')
  const done = await submit(browser, '/oauth/device', { csrf_token: form.csrf, user_code: userCode, decision })
  expect(done).toMatchObject({ status: 303, location: '/oauth/device' })
  return (await getPage(browser, '/oauth/device')).html
}

describe('RFC 8628 3.1-3.2 device authorization request and response', () => {
  it('3.2: device_code, user_code, verification_uri(_complete), expires_in and interval, never cached', async () => {
    const res = await authorizeDevice({ client_id: cli.uid, scope: 'read_energy' })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const codes = res.body as unknown as Codes
    expect(codes.device_code).toMatch(/^cmpd_[A-Za-z0-9_-]{43}$/)
    expect(codes.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
    expect(codes.verification_uri).toBe(`${server.url}/oauth/device`)
    expect(codes.verification_uri_complete).toBe(`${server.url}/oauth/device?user_code=${codes.user_code}`)
    expect(codes).toMatchObject({ expires_in: 300, interval: 5 })
  })

  it('both codes are stored only as digests', async () => {
    const codes = await newCodes()
    const rows = await server.db.selectFrom('device_grants').selectAll().execute()
    const dump = JSON.stringify(rows)
    expect(dump).not.toContain(codes.device_code)
    expect(dump).not.toContain(codes.user_code.replace('-', ''))
    const row = rows.find((r) => r.device_code_digest.equals(digest(codes.device_code)))
    expect(row?.user_code_digest.equals(digest(codes.user_code.replace('-', '')))).toBe(true)
  })

  it('3.2 / RFC 6749 5.2: unauthorized_client without the switch, invalid_client unknown or absent, invalid_scope', async () => {
    const off = await authorizeDevice({ client_id: f.spa.uid, scope: 'api' })
    expect([off.status, off.body.error]).toEqual([400, 'unauthorized_client'])
    const unknown = await authorizeDevice({ client_id: 'nobody' })
    expect([unknown.status, unknown.body.error]).toEqual([401, 'invalid_client'])
    const none = await authorizeDevice({})
    expect([none.status, none.body.error]).toEqual([401, 'invalid_client'])
    const wrongSecret = await authorizeDevice({}, { authorization: basic(f.web.uid, 'not-the-secret') })
    expect([wrongSecret.status, wrongSecret.body.error]).toEqual([401, 'invalid_client'])
    for (const scope of ['openid', 'nonsense', '']) {
      const res = await authorizeDevice({ client_id: cli.uid, scope })
      expect([scope, res.status, res.body.error]).toEqual([scope, 400, 'invalid_scope'])
    }
  })

  it('RFC 8414: the metadata lists the grant and device_authorization_endpoint', async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as {
      grant_types_supported: string[]
      device_authorization_endpoint: string
    }
    expect(metadata.grant_types_supported).toContain(DEVICE_CODE_GRANT)
    expect(metadata.device_authorization_endpoint).toBe(`${server.url}/oauth/authorize_device`)
  })
})

describe('RFC 8628 3.3-3.5 user interaction and polling', () => {
  it('3.5 authorization_pending, then slow_down (the interval grows by 5), then tokens once approved', async () => {
    const codes = await newCodes('read_energy read_user')
    const pending = await poll(codes.device_code)
    expect([pending.status, pending.body.error]).toEqual([400, 'authorization_pending'])
    const tooFast = await poll(codes.device_code)
    expect([tooFast.status, tooFast.body.error]).toEqual([400, 'slow_down'])
    expect(tooFast.body.error_description).toContain('10 seconds')
    await intervalPassed(codes.device_code)
    expect((await poll(codes.device_code)).body.error).toBe('authorization_pending')

    const page = await decide(codes.user_code.toLowerCase().replace('-', ' '), 'approve')
    expect(page).toContain('Energy CLI is authorized: go back to your device.')
    await intervalPassed(codes.device_code)
    const granted = await poll(codes.device_code)
    expect(granted.status).toBe(200)
    expect(granted.headers.get('cache-control')).toBe('no-store')
    expect(granted.body).toMatchObject({ token_type: 'Bearer', expires_in: 7200, scope: 'read_energy read_user' })
    expect(granted.body.refresh_token).toMatch(/^cmpr_/)
    const me = await bearer(server.url, granted.body.access_token as string)
    expect(((await me.json()) as { username: string }).username).toBe('alice')

    // 3.5 / RFC 6749 5.2: a device code is redeemed once
    await intervalPassed(codes.device_code)
    const again = await poll(codes.device_code)
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant'])
  })

  it('an approval is listed under Authorized applications; revoking it there ends the grant before it is redeemed', async () => {
    const codes = await newCodes()
    await decide(codes.user_code, 'approve')
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(browser, '/profile/applications')
    const revoke = new RegExp(`action="(/profile/applications/authorized/${cli.id}/revoke)"`).exec(page.html)?.[1]
    expect(revoke).toBeDefined()
    expect((await submit(browser, revoke as string, { csrf_token: page.csrf })).status).toBe(303)
    const refused = await poll(codes.device_code)
    expect([refused.status, refused.body.error]).toEqual([400, 'invalid_grant'])
  })

  it('3.5 access_denied when the person denies', async () => {
    const codes = await newCodes()
    const page = await decide(codes.user_code, 'deny')
    expect(page).toContain('Energy CLI was denied access.')
    const denied = await poll(codes.device_code)
    expect([denied.status, denied.body.error]).toEqual([400, 'access_denied'])
  })

  it('3.5 expired_token once the device code expired; the page no longer takes its user code', async () => {
    const codes = await newCodes()
    await server.db
      .updateTable('device_grants')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('device_code_digest', '=', digest(codes.device_code))
      .execute()
    const expired = await poll(codes.device_code)
    expect([expired.status, expired.body.error]).toEqual([400, 'expired_token'])
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const form = await getPage(browser, '/oauth/device')
    const refused = await submit(browser, '/oauth/device', { csrf_token: form.csrf, user_code: codes.user_code })
    expect(refused.status).toBe(422)
    expect(refused.html).toContain('This code is not valid')
  })

  it('RFC 6749 5.2 invalid_grant: an unknown device code, or one issued to another client', async () => {
    const unknown = await poll('cmpd_unknown')
    expect([unknown.status, unknown.body.error]).toEqual([400, 'invalid_grant'])
    const other = await createApplication(server.db, {
      name: 'Other device app',
      redirectUris: ['http://127.0.0.1/cb'],
      scopes: ['read_energy'],
      confidential: false,
      grantTypes: [DEVICE_CODE_GRANT],
    })
    const codes = await newCodes()
    const stolen = await poll(codes.device_code, other.application.uid)
    expect([stolen.status, stolen.body.error]).toEqual([400, 'invalid_grant'])
    const missing = await postForm(server.url, '/oauth/token', { grant_type: DEVICE_CODE_GRANT, client_id: cli.uid })
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_request'])
  })

  it('RFC 6749 5.2 unauthorized_client: polling by an application without the switch', async () => {
    const res = await poll('cmpd_whatever', f.spa.uid)
    expect([res.status, res.body.error]).toEqual([400, 'unauthorized_client'])
  })
})

describe("the application's owner switches the grant on", () => {
  it('the Device authorization box of the form; the application then gets device codes', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const form = await getPage(browser, '/profile/applications')
    expect(form.html).toContain('name="device_grant" value="1"')
    const created = await submit(browser, '/profile/applications', {
      csrf_token: form.csrf,
      name: 'Meter reader CLI',
      redirect_uris: 'http://127.0.0.1/cb',
      scopes: ['read_energy'],
      device_grant: ['0', '1'],
    })
    expect(created.status).toBe(303)
    const shown = await getPage(browser, created.location as string)
    expect(shown.html).toContain('<dt>Device authorization</dt><dd>Allowed</dd>')
    const uid = /<code id="uid">([^<]+)<\/code>/.exec(shown.html)?.[1] as string
    const codes = await authorizeDevice({ client_id: uid, scope: 'read_energy' })
    expect(codes.status).toBe(200)
  })
})

describe('RFC 8628 3.3 the verification page', () => {
  it('signed out: to the sign-in page and back, the code kept', async () => {
    const res = await fetch(`${server.url}/oauth/device?user_code=BCDF-GHJK`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    const location = res.headers.get('location') as string
    expect(location).toBe(`/users/sign_in?return_to=${encodeURIComponent('/oauth/device?user_code=BCDF-GHJK')}`)
  })

  it('forms without the CSRF token are refused, and decide nothing', async () => {
    const codes = await newCodes()
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const refused = await submit(browser, '/oauth/device', { user_code: codes.user_code, decision: 'approve' })
    expect(refused.status).toBe(403)
    expect((await poll(codes.device_code)).body.error).toBe('authorization_pending')
  })

  it('5.1: wrong user codes are throttled like failed sign-ins (429 with Retry-After)', async () => {
    await createUser(server.db, { username: 'carol', password: PASSWORD, email: 'carol@example.org', name: 'Carol' })
    const codes = await newCodes()
    const browser = await signedIn(server.url, 'carol', PASSWORD)
    const form = await getPage(browser, '/oauth/device')
    for (let i = 0; i < 3; i++) {
      const miss = await submit(browser, '/oauth/device', { csrf_token: form.csrf, user_code: 'BBBB-BBBB' })
      expect(miss.status).toBe(422)
    }
    const blocked = await submit(browser, '/oauth/device', { csrf_token: form.csrf, user_code: codes.user_code })
    expect(blocked.status).toBe(429)
  })
})

describe('what the redemption holds follows the application and the scopes', () => {
  it('no refresh token without the refresh_token grant; an id_token when openid is granted (OpenID Connect)', async () => {
    const { application } = await createApplication(server.db, {
      name: 'Kiosk',
      redirectUris: ['http://127.0.0.1/cb'],
      scopes: ['openid', 'read_user'],
      confidential: false,
      grantTypes: [DEVICE_CODE_GRANT],
    })
    const codes = (await authorizeDevice({ client_id: application.uid, scope: 'openid read_user' }))
      .body as unknown as Codes
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const form = await getPage(browser, `/oauth/device?user_code=${codes.user_code}`)
    await submit(browser, '/oauth/device', { csrf_token: form.csrf, user_code: codes.user_code, decision: 'approve' })
    const granted = await poll(codes.device_code, application.uid)
    expect(granted.status).toBe(200)
    expect(granted.body.refresh_token).toBeUndefined()
    const keys = createRemoteJWKSet(new URL(`${server.url}/oauth/discovery/keys`))
    const { payload } = await jwtVerify(granted.body.id_token as string, keys, {
      issuer: server.url,
      audience: application.uid,
    })
    expect(payload.sub).toBe(String(f.alice.id))
  })
})

describe('the consent page says whose application asks', () => {
  it("the instance's own, or the user who registered it; a user's application cannot take an instance application's name", async () => {
    const own = await newCodes()
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const form = await getPage(browser, '/oauth/device')
    const instance = await submit(browser, '/oauth/device', { csrf_token: form.csrf, user_code: own.user_code })
    expect(instance.html).toContain('An application of this instance.')

    const { application } = await createApplication(server.db, {
      name: 'Energy dashboard by bob',
      redirectUris: ['http://127.0.0.1/cb'],
      scopes: ['read_user'],
      confidential: false,
      grantTypes: [DEVICE_CODE_GRANT],
      ownerId: f.bob.id,
    })
    const codes = (await authorizeDevice({ client_id: application.uid, scope: 'read_user' })).body as unknown as Codes
    const theirs = await submit(browser, '/oauth/device', { csrf_token: form.csrf, user_code: codes.user_code })
    expect(theirs.html).toContain('An application registered by the user <strong>bob</strong>, not by this instance.')

    // and bob cannot call his application by the instance application's name, in any case
    const bobs = await signedIn(server.url, 'bob', PASSWORD, f.bob.otpSecret)
    const page = await getPage(bobs, '/profile/applications')
    const refused = await submit(bobs, '/profile/applications', {
      csrf_token: page.csrf,
      name: 'energy CLI',
      redirect_uris: 'http://127.0.0.1/cb',
      scopes: ['read_user'],
    })
    expect(refused.status).toBe(422)
    expect(refused.html).toContain('is taken by an application of this instance')
  })
})
