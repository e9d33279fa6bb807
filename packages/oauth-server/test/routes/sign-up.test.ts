/** /users/sign_up: 404 unless OAUTH_SIGNUP_ENABLED; creates the account and signs in; errors keep the input. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication } from '../../src/accounts.ts'
import type { OAuthApp } from '../../src/oauth-app.ts'
import { Browser, issueToken, startServer, type TestServer } from '../helpers.ts'
import { getPage, submit } from '../pages-helpers.ts'

const app = (server: TestServer) => server.app as unknown as OAuthApp

describe('/users/sign_up', () => {
  let closed: TestServer
  let open: TestServer

  beforeAll(async () => {
    closed = await startServer()
    open = await startServer({ signupEnabled: true })
  })
  afterAll(async () => {
    await closed?.close()
    await open?.close()
  })

  it('does not exist when sign-up is off (the default), and the sign-in page does not offer it', async () => {
    const browser = new Browser(closed.url)
    expect((await getPage(browser, '/users/sign_up')).status).toBe(404)
    const form = await getPage(browser, '/users/sign_in')
    expect(form.html).not.toContain('/users/sign_up')
    const res = await submit(browser, '/users/sign_up', {
      csrf_token: form.csrf,
      username: 'eve',
      email: 'eve@example.org',
      name: 'Eve',
      password: 'long enough password',
    })
    expect(res.status).toBe(404)
    expect(await closed.db.selectFrom('users').selectAll().execute()).toHaveLength(0)
  })

  it('registers and signs in when enabled; errors keep the input; CSRF required', async () => {
    const browser = new Browser(open.url)
    expect((await getPage(browser, '/users/sign_in')).html).toContain('href="/users/sign_up"')
    const form = await getPage(browser, '/users/sign_up')
    expect(form.status).toBe(200)
    const fields = { username: 'eve', email: 'eve@example.org', name: 'Eve <3', password: 'long enough password' }
    expect((await submit(browser, '/users/sign_up', fields)).status).toBe(403)
    const short = await submit(browser, '/users/sign_up', { ...fields, csrf_token: form.csrf, password: 'short' })
    expect(short.status).toBe(422)
    expect(short.html).toContain('Password must have at least 8 characters.')
    expect(short.html).toContain('value="Eve &lt;3"')
    expect(short.html).toContain('value="eve@example.org"')
    const done = await submit(browser, '/users/sign_up', { ...fields, csrf_token: form.csrf })
    expect(done).toMatchObject({ status: 303, location: '/profile' })
    expect((await getPage(browser, '/profile/applications')).html).toContain('Signed in as <strong>eve</strong>')

    const other = new Browser(open.url)
    const again = await getPage(other, '/users/sign_up')
    const taken = await submit(other, '/users/sign_up', { ...fields, csrf_token: again.csrf })
    expect(taken.status).toBe(422)
    expect(taken.html).toContain('Email is already taken.')
  })

  it("asserts no self-typed address: a sign-up's email reaches no id_token or userinfo, email_verified says so (OIDC Core 5.1, 5.7)", async () => {
    const browser = new Browser(open.url)
    const form = await getPage(browser, '/users/sign_up')
    // someone else's address, typed at sign-up
    const done = await submit(browser, '/users/sign_up', {
      csrf_token: form.csrf,
      username: 'mallory',
      email: 'victim@example.org',
      name: 'Mallory',
      password: 'long enough password',
    })
    expect(done.status).toBe(303)
    const mallory = await open.db
      .selectFrom('users')
      .selectAll()
      .where('username', '=', 'mallory')
      .executeTakeFirstOrThrow()
    const { application } = await createApplication(open.db, {
      name: 'Relying party',
      redirectUris: ['https://rp.example/cb'],
      scopes: ['openid', 'email'],
    })
    const { access_token } = await issueToken(open, {
      applicationId: application.id,
      userId: mallory.id,
      scopes: ['openid', 'email'],
    })
    const info = await fetch(`${open.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${access_token}` } })
    expect(await info.json()).toEqual({ sub: String(mallory.id), email_verified: false })
    const openid = (await app(open).openid.idToken({
      issuer: open.url,
      clientId: application.uid,
      user: mallory,
      scopes: ['openid', 'email'],
      nonce: null,
      authTime: null,
    })) as string
    const claims = JSON.parse(Buffer.from(openid.split('.')[1] as string, 'base64url').toString())
    expect(claims.email).toBeUndefined()
    expect(claims.email_verified).toBe(false)
    // and discovery lists the claim
    const discovery = (await (await fetch(`${open.url}/.well-known/openid-configuration`)).json()) as {
      claims_supported: string[]
    }
    expect(discovery.claims_supported).toContain('email_verified')
  })
})
