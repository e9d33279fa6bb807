/** /admin over HTTP: users list, lock and unlock (sign-in and tokens refused), trusted applications; 404 for others. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../../src/accounts.ts'
import {
  authorizeInBrowser,
  Browser,
  basic,
  issueToken,
  PASSWORD,
  postForm,
  seed,
  startServer,
  type TestServer,
} from '../helpers.ts'
import { bearer, getPage, signedIn, submit } from '../pages-helpers.ts'

describe('/admin', () => {
  let server: TestServer
  let fixtures: Awaited<ReturnType<typeof seed>>

  beforeAll(async () => {
    server = await startServer()
    fixtures = await seed(server.db, server.settings.secretKey)
    await createUser(server.db, { username: 'root', password: PASSWORD, admin: true })
  })
  afterAll(async () => {
    await server?.close()
  })

  it('answers 404 to a non-administrator, on pages and on actions', async () => {
    const alice = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(alice, '/admin/users')
    expect(page.status).toBe(404)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect((await getPage(alice, '/admin/applications')).status).toBe(404)
    const csrf = (await getPage(alice, '/profile/applications')).csrf
    expect((await submit(alice, `/admin/users/${fixtures.bob.id}/lock`, { csrf_token: csrf })).status).toBe(404)
    expect((await submit(alice, `/admin/applications/${fixtures.web.id}/trust`, { csrf_token: csrf })).status).toBe(404)
    const bob = await server.db
      .selectFrom('users')
      .select('locked')
      .where('id', '=', fixtures.bob.id)
      .executeTakeFirstOrThrow()
    expect(bob.locked).toBe(false)
  })

  it('locks a user (no sign-in, no token, sessions ended) and unlocks them', async () => {
    const root = await signedIn(server.url, 'root', PASSWORD)
    const alice = await signedIn(server.url, 'alice', PASSWORD)
    const token = await issueToken(server, {
      applicationId: fixtures.web.id,
      userId: fixtures.alice.id,
      scopes: ['read_user'],
      refresh: true,
    })
    expect((await bearer(server.url, token.access_token)).status).toBe(200) // cached now

    const users = await getPage(root, '/admin/users')
    expect(users.status).toBe(200)
    expect(users.html).toContain('<td>alice</td>')
    expect((await submit(root, `/admin/users/${fixtures.alice.id}/lock`, {})).status).toBe(403)
    const locked = await submit(root, `/admin/users/${fixtures.alice.id}/lock`, { csrf_token: users.csrf })
    expect(locked).toMatchObject({ status: 303, location: '/admin/users' })
    expect((await getPage(root, '/admin/users')).html).toContain('The user was locked.')

    expect((await bearer(server.url, token.access_token)).status).toBe(403)
    const refresh = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: token.refresh_token as string },
      { authorization: basic(fixtures.web.uid, fixtures.web.secret) },
    )
    expect(refresh.body).toMatchObject({ error: 'invalid_grant', error_description: 'The account is locked.' })
    const introspection = await postForm(
      server.url,
      '/oauth/introspect',
      { token: token.access_token },
      { authorization: basic(fixtures.web.uid, fixtures.web.secret) },
    )
    expect(introspection.body).toEqual({ active: false })
    expect((await alice.request('/profile/applications')).status).toBe(302)
    const fresh = new Browser(server.url)
    const form = await getPage(fresh, '/users/sign_in')
    const refused = await submit(fresh, '/users/sign_in', {
      csrf_token: form.csrf,
      username: 'alice',
      password: PASSWORD,
    })
    expect(refused.location).toContain('error=locked')

    const page = await getPage(root, '/admin/users')
    const unlocked = await submit(root, `/admin/users/${fixtures.alice.id}/unlock`, { csrf_token: page.csrf })
    expect(unlocked).toMatchObject({ status: 303, location: '/admin/users' })
    expect((await bearer(server.url, token.access_token)).status).toBe(200)
    await signedIn(server.url, 'alice', PASSWORD)
  })

  it('marks an application trusted: its users skip the consent page', async () => {
    const root = await signedIn(server.url, 'root', PASSWORD)
    const apps = await getPage(root, '/admin/applications')
    expect(apps.html).toContain('<td>Other</td>')
    const authorize = `/oauth/authorize?${new URLSearchParams({
      client_id: fixtures.other.uid,
      redirect_uri: 'https://other.example/cb',
      response_type: 'code',
      scope: 'read_user',
    })}`
    const alice = await signedIn(server.url, 'alice', PASSWORD)
    expect(await (await alice.request(authorize)).text()).toContain('Authorize Other?')

    const res = await submit(root, `/admin/applications/${fixtures.other.id}/trust`, { csrf_token: apps.csrf })
    expect(res).toMatchObject({ status: 303, location: '/admin/applications' })
    const row = await server.db
      .selectFrom('applications')
      .select('trusted')
      .where('id', '=', fixtures.other.id)
      .executeTakeFirstOrThrow()
    expect(row.trusted).toBe(true)
    const location = await authorizeInBrowser(alice, authorize, { username: 'alice', password: PASSWORD }, 'deny')
    expect(new URL(location).searchParams.get('code')).toMatch(/^cmpc_/)

    const again = await getPage(root, '/admin/applications')
    await submit(root, `/admin/applications/${fixtures.other.id}/untrust`, { csrf_token: again.csrf })
    expect(await (await alice.request(authorize)).text()).toContain('Authorize Other?')
  })

  it('only instance-wide applications can be trusted', async () => {
    // a user registers an application and an administrator tries to trust it
    const owner = await signedIn(server.url, 'alice', PASSWORD)
    const form = await getPage(owner, '/profile/applications')
    const created = await submit(owner, '/profile/applications', {
      csrf_token: form.csrf,
      name: 'Owned by alice',
      redirect_uris: 'https://owned.example/cb',
      confidential: '1',
      scopes: ['read_user'],
    })
    const path = created.location as string
    const id = Number(path.split('/').pop())
    const root = await signedIn(server.url, 'root', PASSWORD)
    const apps = await getPage(root, '/admin/applications')
    expect(apps.html).toContain('<td>Owned by alice</td>')
    expect(apps.html).not.toContain(`/admin/applications/${id}/trust`)
    const refused = await submit(root, `/admin/applications/${id}/trust`, { csrf_token: apps.csrf })
    expect(refused).toMatchObject({ status: 303, location: '/admin/applications' })
    expect((await getPage(root, '/admin/applications')).html).toContain(
      'Only instance-wide applications can be trusted',
    )
    const stored = () =>
      server.db.selectFrom('applications').select('trusted').where('id', '=', id).executeTakeFirstOrThrow()
    expect((await stored()).trusted).toBe(false)
    // nor by writing the row directly
    await expect(
      server.db.updateTable('applications').set({ trusted: true }).where('id', '=', id).execute(),
    ).rejects.toThrow(/applications_trusted_instance_wide/)

    // the owner points it at an attacker; a signed-in user opening the link is still asked
    const edit = await getPage(owner, `${path}/edit`)
    const edited = await submit(owner, path, {
      csrf_token: edit.csrf,
      name: 'Owned by alice',
      redirect_uris: 'https://attacker.example/steal',
      confidential: '1',
      scopes: ['api'],
    })
    expect(edited.status).toBe(303)
    const uid = (
      await server.db.selectFrom('applications').select('uid').where('id', '=', id).executeTakeFirstOrThrow()
    ).uid
    const victim = await signedIn(server.url, 'root', PASSWORD)
    const res = await victim.request(
      `/oauth/authorize?${new URLSearchParams({
        response_type: 'token',
        client_id: uid,
        redirect_uri: 'https://attacker.example/steal',
        scope: 'api',
      })}`,
    )
    expect(res.headers.get('location')).toBeNull()
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Authorize Owned by alice?')
  })
})
