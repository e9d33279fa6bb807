/**
 * RFC 6749 4.4, the client credentials grant, with Doorkeeper's error codes
 * (lib/doorkeeper/oauth/client_credentials/validator.rb: invalid_client, unauthorized_client,
 * invalid_scope), on a listening server; the owner's side through the pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication } from '../src/accounts.ts'
import type { OAuthApp } from '../src/oauth-app.ts'
import { setUserLocked } from '../src/repositories/users.ts'
import { basic, PASSWORD, postForm, seed, startServer, type TestServer } from './helpers.ts'
import { bearer, getPage, signedIn, submit } from './pages-helpers.ts'

let server: TestServer
let f: Awaited<ReturnType<typeof seed>>
let exporter: { id: number; uid: string; secret: string }

beforeAll(async () => {
  server = await startServer()
  f = await seed(server.db, server.settings.secretKey)
  const created = await createApplication(server.db, {
    name: 'Nightly export',
    redirectUris: ['https://export.example/cb'],
    scopes: ['read_energy', 'read_user'],
    grantTypes: ['client_credentials'],
    ownerId: f.alice.id,
  })
  exporter = { id: created.application.id, uid: created.application.uid, secret: created.secret as string }
})
afterAll(async () => {
  await server?.close()
})

const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  postForm(server.url, '/oauth/token', { grant_type: 'client_credentials', ...form }, headers)
const asExporter = () => ({ authorization: basic(exporter.uid, exporter.secret) })
const introspect = (value: string) =>
  postForm(server.url, '/oauth/introspect', { token: value }, { authorization: basic(exporter.uid, exporter.secret) })

describe('RFC 6749 4.4 client credentials grant', () => {
  it("4.4.2-4.4.3: a token with the application's scopes, no user and no refresh token", async () => {
    const res = await token({}, asExporter())
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 7200, scope: 'read_energy read_user' })
    expect(res.body.refresh_token).toBeUndefined()
    const access = res.body.access_token as string
    const info = await introspect(access)
    expect(info.body).toMatchObject({ active: true, scope: 'read_energy read_user', client_id: exporter.uid })
    expect(info.body.username).toBeUndefined()
    expect(info.body.sub).toBeUndefined()
    const tokenInfo = await bearer(server.url, access, '/oauth/token/info')
    expect(await tokenInfo.json()).toMatchObject({ resource_owner_id: null, application: { uid: exporter.uid } })
    // nobody on the users' API (GitLab's api_guard finds no user)
    expect((await bearer(server.url, access)).status).toBe(401)
  })

  it("4.4.2: a scope within the application's is granted as asked (client_secret_post too)", async () => {
    const res = await token({ scope: 'read_energy', client_id: exporter.uid, client_secret: exporter.secret })
    expect(res.status).toBe(200)
    expect(res.body.scope).toBe('read_energy')
  })

  it("5.2 invalid_scope: a scope beyond the application's, unknown, or empty", async () => {
    for (const scope of ['api', 'read_energy api', 'nonsense', '']) {
      const res = await token({ scope }, asExporter())
      expect([scope, res.status, res.body.error]).toEqual([scope, 400, 'invalid_scope'])
    }
  })

  it('5.2 invalid_client: a wrong secret, or no client authentication at all (401)', async () => {
    const wrong = await token({}, { authorization: basic(exporter.uid, 'not-the-secret') })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error).toBe('invalid_client')
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/)
    const none = await token({})
    expect(none.status).toBe(401)
    expect(none.body.error).toBe('invalid_client')
  })

  it('5.2 unauthorized_client: an application without the switch, and any public client', async () => {
    const off = await token({}, { authorization: basic(f.web.uid, f.web.secret) })
    expect(off.status).toBe(400)
    expect(off.body.error).toBe('unauthorized_client')
    const pub = await token({ client_id: f.spa.uid })
    expect(pub.status).toBe(400)
    expect(pub.body.error).toBe('unauthorized_client')
  })

  it("a blocked owner stops the application's own tokens: no new one, and those it holds are refused everywhere", async () => {
    const before = (await token({}, asExporter())).body.access_token as string
    expect((await introspect(before)).body.active).toBe(true)
    // as the admin page locks a user: through the change mechanism, which every instance hears
    const { changes } = server.app as unknown as OAuthApp
    const lock = (locked: boolean) => changes.commit((trx) => setUserLocked(trx, f.alice.id, locked))
    await lock(true)
    try {
      const refused = await token({}, asExporter())
      expect([refused.status, refused.body.error]).toEqual([400, 'unauthorized_client'])
      // at once, the lookup caches dropped by the change: introspection (what the data API asks) and token info
      expect((await introspect(before)).body).toEqual({ active: false })
      expect((await bearer(server.url, before, '/oauth/token/info')).status).toBe(400)
    } finally {
      await lock(false)
    }
    // unblocked, the same token acts again (it was never revoked)
    expect((await introspect(before)).body.active).toBe(true)
    expect((await token({}, asExporter())).status).toBe(200)
  })

  it('the grant is listed in the metadata', async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as {
      grant_types_supported: string[]
    }
    expect(metadata.grant_types_supported).toContain('client_credentials')
  })
})

describe("the application's owner sees and revokes its own tokens", () => {
  it('lists the live tokens on the application page; Revoke ends one at once', async () => {
    const issued = (await token({ scope: 'read_energy' }, asExporter())).body.access_token as string
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const page = await getPage(browser, `/profile/applications/${exporter.id}`)
    expect(page.html).toContain('<dt>Client credentials</dt><dd>Allowed</dd>')
    const forms = [...page.html.matchAll(/action="(\/profile\/applications\/\d+\/tokens\/(\d+)\/revoke)"/g)]
    expect(forms.length).toBeGreaterThan(0)
    const newest = forms[0]?.[1] as string // newest first
    const done = await submit(browser, newest, { csrf_token: page.csrf })
    expect(done).toMatchObject({ status: 303, location: `/profile/applications/${exporter.id}` })
    expect((await introspect(issued)).body).toEqual({ active: false })
    // another user cannot revoke them
    const bob = await signedIn(server.url, 'bob', PASSWORD, f.bob.otpSecret)
    const other = await getPage(bob, '/profile/applications')
    const refused = await submit(bob, forms[1]?.[1] as string, { csrf_token: other.csrf })
    expect(refused.status).toBe(404)
  })

  it('the switch is on the form; a public application cannot have it', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const form = await getPage(browser, '/profile/applications')
    expect(form.html).toContain('name="client_credentials" value="1"')
    const base = { csrf_token: form.csrf, name: 'Public exporter', redirect_uris: 'https://pub.example/cb' }
    const refused = await submit(browser, '/profile/applications', {
      ...base,
      scopes: ['read_energy'],
      client_credentials: ['0', '1'],
    })
    expect(refused.status).toBe(422)
    expect(refused.html).toContain('Client credentials are for confidential applications only')
    const created = await submit(browser, '/profile/applications', {
      ...base,
      name: 'Confidential exporter',
      confidential: '1',
      scopes: ['read_energy'],
      client_credentials: ['0', '1'],
    })
    expect(created.status).toBe(303)
    const shown = await getPage(browser, created.location as string)
    expect(shown.html).toContain('<dt>Client credentials</dt><dd>Allowed</dd>')
  })
})
