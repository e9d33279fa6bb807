/** /profile/personal_access_tokens over HTTP: create (shown once), use, list, revoke; validation; CSRF. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, seed, startServer, type TestServer } from '../helpers.ts'
import { bearer, getPage, signedIn, submit, textOf } from '../pages-helpers.ts'

const PATH = '/profile/personal_access_tokens'

describe('/profile/personal_access_tokens', () => {
  let server: TestServer
  let fixtures: Awaited<ReturnType<typeof seed>>

  beforeAll(async () => {
    server = await startServer()
    fixtures = await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => {
    await server?.close()
  })

  it('creates a token shown once, which works on the API, and revokes it', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(browser, PATH)
    expect(page.html).toContain('You have no personal access tokens.')
    const created = await submit(browser, PATH, {
      csrf_token: page.csrf,
      name: 'ci <deploy>',
      expires_at: '2099-12-31',
      scopes: ['read_user', 'read_api'],
    })
    expect(created).toMatchObject({ status: 303, location: PATH })
    const shown = await getPage(browser, PATH)
    const token = textOf(shown.html, 'token') as string
    expect(token).toMatch(/^cmpp_/)
    expect(shown.html).toContain('<td>ci &lt;deploy&gt;</td><td>read_user read_api</td>')
    expect(shown.html).toContain('<td>2099-12-31</td><td>Active</td>')
    expect((await getPage(browser, PATH)).html).not.toContain(token)

    const me = await bearer(server.url, token)
    expect(me.status).toBe(200)
    expect(((await me.json()) as { username: string }).username).toBe('alice')

    const row = await server.db.selectFrom('personal_access_tokens').select('id').executeTakeFirstOrThrow()
    expect(shown.html).toContain(`action="${PATH}/${row.id}/revoke"`)
    const revoked = await submit(browser, `${PATH}/${row.id}/revoke`, { csrf_token: shown.csrf })
    expect(revoked).toMatchObject({ status: 303, location: PATH })
    expect((await bearer(server.url, token)).status).toBe(401)
    const after = await getPage(browser, PATH)
    expect(after.html).toContain('The token was revoked.')
    expect(after.html).toContain('<td>Revoked</td>')
  })

  it('keeps the input and names the problem when the form is incomplete', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(browser, PATH)
    const res = await submit(browser, PATH, { csrf_token: page.csrf, name: 'nightly', expires_at: '2001-01-01' })
    expect(res.status).toBe(422)
    expect(res.html).toContain('Expiration date must be in the future.')
    expect(res.html).toContain('Select at least one scope.')
    expect(res.html).toContain('value="nightly"')
    expect(res.html).toContain('value="2001-01-01"')
  })

  it('refuses forms without the CSRF token and revoking another user’s token', async () => {
    const alice = await signedIn(server.url, 'alice', PASSWORD)
    const before = (await server.db.selectFrom('personal_access_tokens').select('id').execute()).length
    expect((await submit(alice, PATH, { name: 'x', scopes: 'api' })).status).toBe(403)
    expect((await server.db.selectFrom('personal_access_tokens').select('id').execute()).length).toBe(before)

    const page = await getPage(alice, PATH)
    await submit(alice, PATH, { csrf_token: page.csrf, name: 'mine', scopes: 'api' })
    const row = await server.db
      .selectFrom('personal_access_tokens')
      .select('id')
      .where('name', '=', 'mine')
      .executeTakeFirstOrThrow()
    const bob = await signedIn(server.url, 'bob', PASSWORD, fixtures.bob.otpSecret)
    const bobPage = await getPage(bob, PATH)
    expect((await submit(bob, `${PATH}/${row.id}/revoke`, { csrf_token: bobPage.csrf })).status).toBe(404)
    expect((await submit(alice, `${PATH}/${row.id}/revoke`, { csrf_token: 'forged' })).status).toBe(403)
    const still = await server.db
      .selectFrom('personal_access_tokens')
      .select('revoked_at')
      .where('id', '=', row.id)
      .executeTakeFirstOrThrow()
    expect(still.revoked_at).toBeNull()
  })
})
