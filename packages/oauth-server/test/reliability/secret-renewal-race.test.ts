/**
 * Parallel secret renewals of one application (a double-click, two tabs): whatever the
 * interleaving, exactly one new secret is in force, and it is the one the owner is shown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { digest } from '../../src/domain/secrets.ts'
import { basic, PASSWORD, postForm, seed, startServer, type TestServer } from '../helpers.ts'
import { getPage, signedIn, submit, textOf } from '../pages-helpers.ts'

describe('parallel secret renewals', () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer()
    await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => server?.close())

  it('leave exactly one secret in force, the one shown to the owner', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const list = await getPage(browser, '/profile/applications')
    const created = await submit(browser, '/profile/applications', {
      csrf_token: list.csrf,
      name: 'Raced',
      redirect_uris: 'https://app.example/cb',
      confidential: '1',
      scopes: ['read_user'],
      // the password grant below tries the secret in force
      password_grant: '1',
    })
    const path = created.location as string
    const shown = await getPage(browser, path)
    const uid = textOf(shown.html, 'uid') as string
    const csrf = (await getPage(browser, path)).csrf

    const answers = await Promise.all(
      Array.from({ length: 12 }, () => submit(browser, `${path}/renew`, { csrf_token: csrf })),
    )
    expect(answers.every((a) => a.status === 303 && a.location === path)).toBe(true)

    const secret = textOf((await getPage(browser, path)).html, 'secret') as string
    expect(secret).toMatch(/^cmps_/)
    const stored = await server.db
      .selectFrom('applications')
      .select('secret_digest')
      .where('uid', '=', uid)
      .executeTakeFirstOrThrow()
    expect(Buffer.from(stored.secret_digest as Buffer).equals(digest(secret))).toBe(true)
    const grant = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'read_user' },
      { authorization: basic(uid, secret) },
    )
    expect(grant.status).toBe(200)
  })
})
