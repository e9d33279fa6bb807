/** /users/sign_up: 404 unless OAUTH_SIGNUP_ENABLED; creates the account and signs in; errors keep the input. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Browser, startServer, type TestServer } from '../helpers.ts'
import { getPage, submit } from '../pages-helpers.ts'

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
})
