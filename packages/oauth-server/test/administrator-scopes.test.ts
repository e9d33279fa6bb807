/**
 * write_energy is given by an administrator only (GitLab keeps its powerful scopes to
 * administrators): a user's own application or personal access token cannot hold it, an
 * administrator allows it, and the database refuses an application holding it unallowed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AccountError, createApplication, createUser } from '../src/accounts.ts'
import { basic, PASSWORD, postForm, seed, startServer, type TestServer } from './helpers.ts'
import { getPage, signedIn, submit, textOf } from './pages-helpers.ts'

let server: TestServer

beforeAll(async () => {
  server = await startServer()
  await seed(server.db, server.settings.secretKey)
  await createUser(server.db, { username: 'root', password: PASSWORD, name: 'Root', admin: true })
})
afterAll(async () => server?.close())

const gateway = (scopes: string[]) => ({
  csrf_token: '',
  name: `Gateway ${scopes.join(' ')} ${Math.random()}`,
  redirect_uris: 'https://gateway.example/cb',
  confidential: '1',
  client_credentials: '1',
  scopes,
})

/** Registers an application on the profile page; its client id and secret once made. */
async function register(browser: Awaited<ReturnType<typeof signedIn>>, scopes: string[]) {
  const page = await getPage(browser, '/profile/applications')
  const made = await submit(browser, '/profile/applications', { ...gateway(scopes), csrf_token: page.csrf })
  if (made.status !== 303) return { made }
  const shown = await getPage(browser, made.location as string)
  return { made, uid: textOf(shown.html, 'uid') as string, secret: textOf(shown.html, 'secret') as string }
}

const clientCredentials = (uid: string, secret: string, scope: string) =>
  postForm(
    server.url,
    '/oauth/token',
    { grant_type: 'client_credentials', scope },
    { authorization: basic(uid, secret) },
  )

describe('write_energy only for applications an administrator allows', () => {
  it('a user cannot give their own client-credentials application write_energy, nor take a token with it', async () => {
    const alice = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(alice, '/profile/applications')
    const refused = await submit(alice, '/profile/applications', {
      ...gateway(['write_energy']),
      csrf_token: page.csrf,
    })
    expect(refused.status).toBe(422)
    expect(refused.html).toContain('The scope write_energy is given by an administrator only.')
    const apps = await server.db.selectFrom('applications').select('scopes').execute()
    expect(apps.filter((a) => a.scopes.includes('write_energy'))).toEqual([])

    // an application without it asks in vain
    const { made, uid, secret } = await register(alice, ['read_energy'])
    expect(made.status).toBe(303)
    const asked = await clientCredentials(uid as string, secret as string, 'write_energy')
    expect(asked.status).toBe(400)
    expect(asked.body.error).toBe('invalid_scope')

    // nor by editing it
    const form = await getPage(alice, `${made.location}/edit`)
    const edited = await submit(alice, made.location as string, {
      ...gateway(['read_energy', 'write_energy']),
      csrf_token: form.csrf,
    })
    expect(edited.status).toBe(422)
    expect(edited.html).toContain('The scope write_energy is given by an administrator only.')
  })

  it('an administrator gives it to an application, which then takes client-credentials tokens with it', async () => {
    const root = await signedIn(server.url, 'root', PASSWORD)
    const { made, uid = '', secret = '' } = await register(root, ['write_energy'])
    expect(made.status).toBe(303)
    const token = await clientCredentials(uid, secret, 'write_energy')
    expect(token.status).toBe(200)
    expect(token.body.scope).toBe('write_energy')
    const row = await server.db
      .selectFrom('applications')
      .select('administrator_scopes')
      .where('uid', '=', uid)
      .executeTakeFirstOrThrow()
    expect(row.administrator_scopes).toEqual(['write_energy'])
  })

  it('the operator\u2019s command line and the instance\u2019s applications may hold it; a user\u2019s may not, whatever the path', async () => {
    const alice = await server.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'alice')
      .executeTakeFirstOrThrow()
    const instance = await createApplication(server.db, {
      name: 'Instance gateway',
      redirectUris: ['https://gateway.example/cb'],
      scopes: ['write_energy'],
      grantTypes: ['client_credentials'],
    })
    expect(instance.application.administrator_scopes).toEqual(['write_energy'])
    await expect(
      createApplication(server.db, {
        name: 'Alice gateway',
        redirectUris: ['https://gateway.example/cb'],
        scopes: ['write_energy'],
        grantTypes: ['client_credentials'],
        ownerId: alice.id,
      }),
    ).rejects.toBeInstanceOf(AccountError)
    // the database holds the rule too
    const own = await createApplication(server.db, {
      name: 'Alice reader',
      redirectUris: ['https://reader.example/cb'],
      scopes: ['read_user'],
      ownerId: alice.id,
    })
    await expect(
      server.db
        .updateTable('applications')
        .set({ scopes: ['read_user', 'write_energy'] })
        .where('id', '=', own.application.id)
        .execute(),
    ).rejects.toThrow(/applications_write_energy_by_administrator/)
  })

  it('a user\u2019s personal access token cannot hold write_energy', async () => {
    const alice = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(alice, '/profile/personal_access_tokens')
    const refused = await submit(alice, '/profile/personal_access_tokens', {
      csrf_token: page.csrf,
      name: 'writer',
      scopes: ['write_energy'],
    })
    expect(refused.status).toBe(422)
    expect(refused.html).toContain('The scope write_energy is given by an administrator only.')
  })
})
