/**
 * /profile/applications over HTTP: sign-in required, CSRF, 303 after every change, security
 * headers, validation keeping the input, the secret shown once, renewal and edits taking effect
 * at once (cached clients forgotten), delete with confirmation, authorized applications and revoke.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../../src/accounts.ts'
import {
  authorizeInBrowser,
  basic,
  exchangeCode,
  PASSWORD,
  postForm,
  seed,
  startServer,
  type TestServer,
} from '../helpers.ts'
import { bearer, getPage, signedIn, submit, textOf } from '../pages-helpers.ts'

describe('/profile/applications', () => {
  let server: TestServer
  let fixtures: Awaited<ReturnType<typeof seed>>

  beforeAll(async () => {
    server = await startServer()
    fixtures = await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => {
    await server?.close()
  })

  const countApps = async () => (await server.db.selectFrom('applications').select('id').execute()).length

  /** A password grant authenticated by the client: proves the credentials work (or not). */
  const passwordGrant = (uid: string, secret: string) =>
    postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'read_user' },
      { authorization: basic(uid, secret) },
    )

  async function createApp(browser: Awaited<ReturnType<typeof signedIn>>, name: string) {
    const page = await getPage(browser, '/profile/applications')
    const created = await submit(browser, '/profile/applications', {
      csrf_token: page.csrf,
      name,
      redirect_uris: 'https://app.example/cb\nhttp://127.0.0.1/callback',
      confidential: '1',
      scopes: ['read_user', 'api'],
      // the password grant is how these tests try the application's secret
      password_grant: '1',
    })
    expect(created.status).toBe(303)
    const shown = await getPage(browser, created.location as string)
    return { path: created.location as string, shown }
  }

  it('sends a signed-out visitor to the sign-in page and back', async () => {
    const res = await fetch(`${server.url}/profile/applications`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/users/sign_in?return_to=%2Fprofile%2Fapplications')
  })

  it('serves the page with the security headers, a stylesheet and no inline script or style', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(browser, '/profile/applications')
    expect(page.status).toBe(200)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline')
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
    expect(page.html).toContain('<link rel="stylesheet" href="/assets/oauth.css">')
    expect(page.html).not.toMatch(/<script(?![^>]*\ssrc=)|<style|\sstyle=|\son[a-z]+=/)
    expect(page.html).toContain('<h2 id="authorized">Authorized applications</h2>')
    // every scope is a labelled checkbox with its description
    expect(page.html).toContain('<input type="checkbox" name="scopes" value="read_user">')
    expect(page.html).toContain('Read-only access to your profile')
  })

  it('serves the stylesheet and the copy script as files from this origin', async () => {
    const css = await fetch(`${server.url}/assets/oauth.css`)
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect(await css.text()).toContain('main{')
    const js = await fetch(`${server.url}/assets/copy.js`)
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(await js.text()).toContain("querySelectorAll('button[data-copy]')")
  })

  it('refuses a form without the CSRF token (403) and changes nothing', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const before = await countApps()
    const res = await submit(browser, '/profile/applications', {
      name: 'Forged',
      redirect_uris: 'https://evil.example/cb',
      scopes: 'api',
    })
    expect(res.status).toBe(403)
    const wrong = await submit(browser, '/profile/applications', {
      csrf_token: 'not-the-token',
      name: 'Forged',
      redirect_uris: 'https://evil.example/cb',
      scopes: 'api',
    })
    expect(wrong.status).toBe(403)
    expect(await countApps()).toBe(before)
  })

  it('shows validation errors on the form with the input kept (bad URI, no scope)', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(browser, '/profile/applications')
    const before = await countApps()
    const res = await submit(browser, '/profile/applications', {
      csrf_token: page.csrf,
      name: 'My <App>',
      redirect_uris: 'https://ok.example/cb\njavascript:alert(1)',
    })
    expect(res.status).toBe(422)
    expect(res.html).toContain('Redirect URI javascript:alert(1) uses the forbidden scheme javascript:.')
    expect(res.html).toContain('Select at least one scope.')
    expect(res.html).toContain('value="My &lt;App&gt;"')
    expect(res.html).toContain('https://ok.example/cb\njavascript:alert(1)</textarea>')
    expect(res.html).toContain('name="confidential" value="1">')
    expect(await countApps()).toBe(before)
  })

  it('shows the secret once, and renewing it stops the old one at once', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const { path, shown } = await createApp(browser, 'Renewable')
    expect(path).toMatch(/^\/profile\/applications\/\d+$/)
    const uid = textOf(shown.html, 'uid') as string
    const secret = textOf(shown.html, 'secret') as string
    expect(secret).toMatch(/^cmps_/)
    expect(shown.html).toContain('<script src="/assets/copy.js" defer></script>')
    expect(shown.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(shown.html).toContain('https://app.example/cb')
    // the stored form is a digest: a reload does not show it again
    const again = await getPage(browser, path)
    expect(again.html).not.toContain(secret)
    expect(textOf(again.html, 'secret')).toBeUndefined()

    expect((await passwordGrant(uid, secret)).status).toBe(200) // the client is now in the cache
    const renewed = await submit(browser, `${path}/renew`, { csrf_token: again.csrf })
    expect(renewed).toMatchObject({ status: 303, location: path })
    const newSecret = textOf((await getPage(browser, path)).html, 'secret') as string
    expect(newSecret).toMatch(/^cmps_/)
    expect(newSecret).not.toBe(secret)
    const old = await passwordGrant(uid, secret)
    expect(old.status).toBe(401)
    expect(old.body.error).toBe('invalid_client')
    expect((await passwordGrant(uid, newSecret)).status).toBe(200)
  })

  it('edits an application (errors keep the input) and the change applies at once', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const { path, shown } = await createApp(browser, 'Editable')
    const uid = textOf(shown.html, 'uid') as string
    const secret = textOf(shown.html, 'secret') as string
    expect((await passwordGrant(uid, secret)).status).toBe(200)
    const form = await getPage(browser, `${path}/edit`)
    expect(form.html).toContain('value="Editable"')
    const bad = await submit(browser, path, {
      csrf_token: form.csrf,
      name: 'Edited',
      redirect_uris: 'http://app.example/cb',
      scopes: 'api',
    })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('must use https')
    expect(bad.html).toContain('value="Edited"')
    const ok = await submit(browser, path, {
      csrf_token: form.csrf,
      name: 'Edited',
      redirect_uris: 'https://edited.example/cb',
      confidential: '1',
      scopes: 'api',
    })
    expect(ok).toMatchObject({ status: 303, location: path })
    const after = await getPage(browser, path)
    expect(after.html).toContain('Application: Edited')
    expect(after.html).toContain('https://edited.example/cb')
    expect(after.html).toContain('The application was updated.')
    // read_user is no longer allowed: the cached registration must not answer
    const res = await passwordGrant(uid, secret)
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_scope')
    expect(after.html).not.toContain(secret) // still the old secret, never shown again
    // becoming public removes the secret
    const pub = await submit(browser, path, {
      csrf_token: form.csrf,
      name: 'Edited',
      redirect_uris: 'https://edited.example/cb',
      scopes: 'api',
    })
    expect(pub.status).toBe(303)
    expect((await passwordGrant(uid, secret)).status).toBe(401)
  })

  it("the owner allows or refuses the password grant (GitLab's ropc_enabled) on the form; a new application has it off", async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(browser, '/profile/applications')
    // off by default (legacy, as the box's hint says): the box is unchecked on a new form...
    expect(page.html).toMatch(/<input type="checkbox" name="password_grant" value="1">/)
    // ...and a form that says nothing of it makes an application without it
    const silent = await submit(browser, '/profile/applications', {
      csrf_token: page.csrf,
      name: 'Silent',
      redirect_uris: 'https://app.example/cb',
      confidential: '1',
      scopes: ['read_user'],
    })
    expect((await getPage(browser, silent.location as string)).html).toContain(
      '<dt>Password grant (ROPC)</dt><dd>Not allowed</dd>',
    )
    // an unchecked box sends only the hidden "0"
    const created = await submit(browser, '/profile/applications', {
      csrf_token: page.csrf,
      name: 'No ROPC',
      redirect_uris: 'https://app.example/cb',
      confidential: '1',
      scopes: ['read_user'],
      password_grant: '0',
    })
    const shown = await getPage(browser, created.location as string)
    expect(shown.html).toContain('<dt>Password grant (ROPC)</dt><dd>Not allowed</dd>')
    const uid = textOf(shown.html, 'uid') as string
    const secret = textOf(shown.html, 'secret') as string
    const refused = await passwordGrant(uid, secret)
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe('unauthorized_client')
    const form = await getPage(browser, `${created.location}/edit`)
    expect(form.html).toMatch(/<input type="checkbox" name="password_grant" value="1">/)
    const edited = await submit(browser, created.location as string, {
      csrf_token: form.csrf,
      name: 'No ROPC',
      redirect_uris: 'https://app.example/cb',
      confidential: '1',
      scopes: ['read_user'],
      password_grant: ['0', '1'],
    })
    expect(edited.status).toBe(303)
    expect((await getPage(browser, created.location as string)).html).toContain(
      '<dt>Password grant (ROPC)</dt><dd>Allowed</dd>',
    )
    expect((await passwordGrant(uid, secret)).status).toBe(200)
  })

  it('deletes only after a confirmation page, and never another user’s application', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const { path, shown } = await createApp(browser, 'Doomed')
    const uid = textOf(shown.html, 'uid') as string
    const secret = textOf(shown.html, 'secret') as string
    const bobBrowser = await signedIn(server.url, 'bob', PASSWORD, fixtures.bob.otpSecret)
    expect((await getPage(bobBrowser, path)).status).toBe(404)
    const bobPage = await getPage(bobBrowser, '/profile/applications')
    expect((await submit(bobBrowser, `${path}/delete`, { csrf_token: bobPage.csrf })).status).toBe(404)

    const confirm = await getPage(browser, `${path}/delete`)
    expect(confirm.html).toContain('Delete Doomed?')
    expect(confirm.html).toContain(`<form method="post" action="${path}/delete">`)
    const deleted = await submit(browser, `${path}/delete`, { csrf_token: confirm.csrf })
    expect(deleted).toMatchObject({ status: 303, location: '/profile/applications' })
    expect((await getPage(browser, path)).status).toBe(404)
    expect((await passwordGrant(uid, secret)).status).toBe(401)
  })

  it('lists what the user authorized; revoking ends the consent and every token of that application', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const authorize = `/oauth/authorize?${new URLSearchParams({
      client_id: fixtures.web.uid,
      redirect_uri: 'https://client.example/cb',
      response_type: 'code',
      scope: 'read_user api',
    })}`
    const location = await authorizeInBrowser(browser, authorize, { username: 'alice', password: PASSWORD })
    const code = new URL(location).searchParams.get('code') as string
    const tokens = await exchangeCode(server.url, code, 'https://client.example/cb', {
      authorization: basic(fixtures.web.uid, fixtures.web.secret),
    })
    expect(tokens.status).toBe(200)
    const access = tokens.body.access_token as string
    expect((await bearer(server.url, access)).status).toBe(200) // now cached

    const page = await getPage(browser, '/profile/applications')
    expect(page.html).toContain('<td>Web App</td>')
    expect(page.html).toMatch(/<td>(api read_user|read_user api)<\/td>/)
    const revoke = `/profile/applications/authorized/${fixtures.web.id}/revoke`
    expect(page.html).toContain(`action="${revoke}"`)
    const res = await submit(browser, revoke, { csrf_token: page.csrf })
    expect(res).toMatchObject({ status: 303, location: '/profile/applications' })

    expect((await bearer(server.url, access)).status).toBe(401)
    const refresh = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string },
      { authorization: basic(fixtures.web.uid, fixtures.web.secret) },
    )
    expect(refresh.body.error).toBe('invalid_grant')
    const after = await getPage(browser, '/profile/applications')
    expect(after.html).toContain('The authorization was revoked.')
    expect(after.html).not.toContain('<td>Web App</td>')
    // consent is asked again
    const again = await browser.request(authorize)
    expect(await again.text()).toContain('Authorize Web App?')
  })

  it('tokens of a password grant made without a client are listed and can be revoked by their user', async () => {
    const grant = await postForm(server.url, '/oauth/token', {
      grant_type: 'password',
      username: 'alice',
      password: PASSWORD,
      scope: 'read_user',
    })
    expect(grant.status).toBe(200)
    const access = grant.body.access_token as string
    expect((await bearer(server.url, access)).status).toBe(200)
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(browser, '/profile/applications')
    expect(page.html).toContain('Anonymous')
    expect(page.html).toContain('Authorization was granted by entering your username and password')
    const action = /action="(\/profile\/applications\/authorized\/tokens\/\d+\/revoke)"/.exec(page.html)?.[1]
    expect(action).toBeDefined()
    // another user cannot revoke it
    await createUser(server.db, { username: 'carol', password: PASSWORD })
    const carol = await signedIn(server.url, 'carol', PASSWORD)
    const carolPage = await getPage(carol, '/profile/applications')
    expect((await submit(carol, action as string, { csrf_token: carolPage.csrf })).status).toBe(404)
    expect((await bearer(server.url, access)).status).toBe(200)
    const res = await submit(browser, action as string, { csrf_token: page.csrf })
    expect(res).toMatchObject({ status: 303, location: '/profile/applications' })
    expect((await bearer(server.url, access)).status).toBe(401)
    expect((await getPage(browser, '/profile/applications')).html).not.toContain(action)
  })
})
