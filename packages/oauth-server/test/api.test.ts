import { undocumentedAnswer } from '@campus/shared/testing'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication, createPersonalAccessToken, createUser } from '../src/accounts.ts'
import { basic, issueToken, seed, startServer, type TestServer } from './helpers.ts'

let server: TestServer
let f: Awaited<ReturnType<typeof seed>>

beforeAll(async () => {
  server = await startServer({}, { listen: false })
  f = await seed(server.db, server.settings.secretKey)
})
afterAll(async () => {
  await server?.close()
})

const get = (url: string, headers: Record<string, string> = {}) => server.app.inject({ method: 'GET', url, headers })
const bearer = (t: string) => ({ authorization: `Bearer ${t}` })
const tokenWith = async (scopes: string[], userId = f.alice.id) =>
  (await issueToken(server, { applicationId: f.web.id, userId, scopes })).access_token

describe('RFC 6750 2: how the token is sent', () => {
  it('Authorization: Bearer', async () => {
    const res = await get('/api/v4/user', bearer(await tokenWith(['read_user'])))
    expect(res.statusCode).toBe(200)
    expect(res.json().username).toBe('alice')
  })
  it('?access_token= query parameter', async () => {
    const res = await get(`/api/v4/user?access_token=${await tokenWith(['read_user'])}`)
    expect(res.statusCode).toBe(200)
  })
  it('?bearer_token= query parameter (accepted by GitLab), at the API and at token info', async () => {
    const t = await tokenWith(['read_user'])
    const res = await get(`/api/v4/user?bearer_token=${t}`)
    expect(res.statusCode).toBe(200)
    expect(res.json().username).toBe('alice')
    expect((await get(`/oauth/token/info?bearer_token=${t}`)).statusCode).toBe(200)
  })
  it('personal access token in PRIVATE-TOKEN, or as a Bearer token', async () => {
    const { token } = await createPersonalAccessToken(server.db, { username: 'bob', name: 'ci', scopes: ['api'] })
    expect((await get('/api/v4/user', { 'private-token': token })).json().username).toBe('bob')
    expect((await get('/api/v4/user', bearer(token))).json().username).toBe('bob')
  })
})

describe('RFC 6750 3.1: GitLab 401 and 403 bodies with WWW-Authenticate', () => {
  it('no token: 401 {"message":"401 Unauthorized"}', async () => {
    const res = await get('/api/v4/user')
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({ message: '401 Unauthorized' })
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="/)
  })
  it('signed out, a body or a parameter is not read: 401 before 400 or 415, as Grape authenticates first', async () => {
    const signedOut = [
      {
        method: 'POST',
        url: '/api/v4/applications',
        payload: '{"name":',
        headers: { 'content-type': 'application/json' },
      },
      {
        method: 'POST',
        url: '/api/v4/applications',
        payload: '<app/>',
        headers: { 'content-type': 'application/xml' },
      },
      { method: 'POST', url: '/api/v4/applications', payload: { name: 'no scopes' } },
      { method: 'PUT', url: '/api/v4/user', payload: { name: 7 } },
      { method: 'DELETE', url: '/api/v4/applications/not-a-number' },
      { method: 'GET', url: '/api/v4/users/0' },
      { method: 'GET', url: '/api/v4/audit_events?per_page=0' },
    ] as const
    for (const request of signedOut) {
      const res = await server.app.inject(request)
      expect([res.statusCode, res.json()], `${request.method} ${request.url}`).toEqual([
        401,
        { message: '401 Unauthorized' },
      ])
    }
    const unknown = await server.app.inject({ ...signedOut[2], headers: bearer('cmpa_unknown') })
    expect([unknown.statusCode, unknown.json().error]).toEqual([401, 'invalid_token'])
  })
  it('unknown token: 401 invalid_token with the challenge', async () => {
    const res = await get('/api/v4/user', bearer('cmpa_unknown'))
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_token')
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]+", error="invalid_token", error_description="/)
  })
  it('expired token: 401 invalid_token', async () => {
    const t = await tokenWith(['api'])
    await sql`update access_tokens set expires_at = now() - interval '1 second' where scopes = array['api']`.execute(
      server.db,
    )
    const res = await get('/api/v4/user', bearer(t))
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({
      error: 'invalid_token',
      error_description: 'Token is expired. You can either do re-authorization or token refresh.',
    })
  })
  it('revoked token: 401 invalid_token', async () => {
    const t = await tokenWith(['read_api'])
    await sql`update access_tokens set revoked_at = now() where scopes = array['read_api']`.execute(server.db)
    const res = await get('/api/v4/user', bearer(t))
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_token')
  })
  it('expired or revoked personal access token: 401 invalid_token', async () => {
    // a token made for a day now past (new tokens must expire in the future)
    const expired = await createPersonalAccessToken(server.db, { username: 'alice', name: 'old', scopes: ['api'] })
    await sql`update personal_access_tokens set expires_at = '2020-01-01' where id = ${expired.id}`.execute(server.db)
    expect((await get('/api/v4/user', { 'private-token': expired.token })).json().error).toBe('invalid_token')
    const revoked = await createPersonalAccessToken(server.db, { username: 'alice', name: 'gone', scopes: ['api'] })
    await sql`update personal_access_tokens set revoked_at = now() where id = ${revoked.id}`.execute(server.db)
    expect((await get('/api/v4/user', { 'private-token': revoked.token })).statusCode).toBe(401)
  })
  it('a blocked account: 403', async () => {
    const { user } = await createUser(server.db, { username: 'mallory', password: 'long enough password' })
    const t = await tokenWith(['api'], user.id)
    await sql`update users set locked = true where id = ${user.id}`.execute(server.db)
    const res = await get('/api/v4/user', bearer(t))
    expect(res.statusCode).toBe(403)
    expect(res.json().message).toMatch(/blocked/)
  })
})

describe("scopes as GitLab's (RFC 6750 3.1 insufficient_scope) on every route, both ways", () => {
  // GitLab: api everywhere; read_api for GET (lib/api/api.rb); read_user for GET of the users API (lib/api/users.rb)
  const matrix: Array<[string, string, Record<string, number>, string]> = [
    ['GET', '/api/v4/user', { read_user: 200, read_api: 200, api: 200, openid: 403 }, 'api read_api read_user'],
    ['GET', '/api/v4/users/ID', { read_user: 200, read_api: 200, api: 200, openid: 403 }, 'api read_api read_user'],
    ['GET', '/api/v4/personal_access_tokens', { read_user: 403, read_api: 200, api: 200 }, 'api read_api'],
    ['PUT', '/api/v4/user', { read_user: 403, read_api: 403, api: 200 }, 'api'],
  ]
  for (const [method, path, expected, needed] of matrix) {
    for (const [scope, status] of Object.entries(expected)) {
      // twice: the token looked up, then as cached (answered without a promise where it can be)
      it(`${method} ${path} with ${scope}: ${status}, looked up and cached alike`, async () => {
        const token = await tokenWith([scope])
        const answers = []
        for (const _time of ['looked up', 'cached']) {
          const res = await server.app.inject({
            method: method as 'GET' | 'PUT',
            url: path.replace('ID', String(f.bob.id)),
            headers: bearer(token),
            ...(method === 'PUT' ? { payload: { bio: `bio via ${scope}` } } : {}),
          })
          expect(res.statusCode).toBe(status)
          if (status === 403) {
            expect(res.json()).toMatchObject({ error: 'insufficient_scope', scope: needed })
            expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"')
            expect(res.headers['www-authenticate']).toContain(`scope="${needed}"`)
          }
          // GitLab's exact type, errors included: python-gitlab compares it whole
          expect(res.headers['content-type']).toBe('application/json')
          answers.push(res.body)
        }
        expect(answers[1]).toBe(answers[0])
      })
    }
  }
  it('a personal access token is held to its scopes too', async () => {
    const { token } = await createPersonalAccessToken(server.db, {
      username: 'alice',
      name: 'ro',
      scopes: ['read_user'],
    })
    expect((await get('/api/v4/personal_access_tokens', { 'private-token': token })).statusCode).toBe(403)
  })
})

describe('/api/v4 payloads', () => {
  it('GET /user: the fields the service has; is_admin only for admins; no secrets', async () => {
    const body = (await get('/api/v4/user', bearer(await tokenWith(['read_user'])))).json()
    expect(body).toMatchObject({
      id: f.alice.id,
      username: 'alice',
      name: 'Alice',
      email: 'alice@example.org',
      state: 'active',
      locked: false,
      two_factor_enabled: false,
    })
    expect(body).not.toHaveProperty('is_admin')
    expect(JSON.stringify(body)).not.toMatch(/password|otp/)
    const { user } = await createUser(server.db, { username: 'root', password: 'long enough password', admin: true })
    expect((await get('/api/v4/user', bearer(await tokenWith(['read_user'], user.id)))).json().is_admin).toBe(true)
  })
  it('GET /users/:id: public fields only; unknown id 404 in GitLab shape', async () => {
    const body = (await get(`/api/v4/users/${f.bob.id}`, bearer(await tokenWith(['read_api'])))).json()
    expect(body.username).toBe('bob')
    expect(body).not.toHaveProperty('email')
    const missing = await get('/api/v4/users/999999', bearer(await tokenWith(['read_api'])))
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ message: '404 User Not Found' })
  })
  it('PUT /user updates the profile, and GET /user with the same (cached) token shows it at once', async () => {
    const token = await tokenWith(['api'])
    expect((await get('/api/v4/user', bearer(token))).json().job_title).not.toBe('Explorer')
    const res = await server.app.inject({
      method: 'PUT',
      url: '/api/v4/user',
      headers: bearer(token),
      payload: { name: 'Alice Liddell', job_title: 'Explorer' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ name: 'Alice Liddell', job_title: 'Explorer' })
    expect((await get('/api/v4/user', bearer(token))).json()).toMatchObject({
      name: 'Alice Liddell',
      job_title: 'Explorer',
    })
  })
  it("GET /personal_access_tokens lists the owner's tokens without their values", async () => {
    const { token } = await createPersonalAccessToken(server.db, {
      username: 'bob',
      name: 'listing',
      scopes: ['api'],
      expiresAt: '2099-12-31',
    })
    const body = (await get('/api/v4/personal_access_tokens', { 'private-token': token })).json()
    const entry = body.find((t: { name: string }) => t.name === 'listing')
    expect(entry).toMatchObject({
      active: true,
      revoked: false,
      scopes: ['api'],
      expires_at: '2099-12-31',
      user_id: f.bob.id,
    })
    expect(JSON.stringify(body)).not.toContain(token)
  })
})

// The fields of GitLab's entities, from its source: lib/api/entities/user_safe.rb and
// user_basic.rb (UserBasic), user.rb (User), user_public.rb (UserPublic)
const USER_BASIC = ['id', 'username', 'name', 'state', 'locked', 'avatar_url', 'web_url']
const USER = [
  ...USER_BASIC,
  ...['created_at', 'bio', 'location', 'public_email', 'skype', 'linkedin', 'twitter', 'discord', 'website_url'],
  ...['organization', 'job_title', 'pronouns', 'bot', 'work_information', 'followers', 'following', 'local_time'],
]
const USER_PUBLIC = [
  ...USER,
  ...['last_sign_in_at', 'confirmed_at', 'last_activity_on', 'email', 'theme_id', 'color_scheme_id'],
  ...['projects_limit', 'current_sign_in_at', 'identities', 'can_create_group', 'can_create_project'],
  ...['two_factor_enabled', 'external', 'private_profile', 'commit_email'],
]

describe("GitLab's user entities, users by username, pagination, attributes in the query string", () => {
  let admin: number
  beforeAll(async () => {
    admin = (await createUser(server.db, { username: 'pager-admin', password: 'long enough password', admin: true }))
      .user.id
    for (const n of [1, 2, 3, 4, 5]) {
      await createUser(server.db, { username: `pager${n}`, password: 'long enough password', name: `Pager ${n}` })
    }
  })

  it('GET /user is UserPublic, GET /users/:id is User, each of their fields present', async () => {
    const me = (await get('/api/v4/user', bearer(await tokenWith(['read_user'])))).json()
    expect(Object.keys(me).sort()).toEqual([...USER_PUBLIC].sort())
    expect(me.web_url).toBe(`${server.settings.issuer}/alice`)
    expect(me.avatar_url).toBeNull()
    const bob = (await get(`/api/v4/users/${f.bob.id}`, bearer(await tokenWith(['read_api'])))).json()
    expect(Object.keys(bob).sort()).toEqual([...USER].sort())
  })

  it('GET /users?username= finds one user (any case) as UserBasic, for anyone signed in; listing all is for administrators', async () => {
    const token = await tokenWith(['read_user'])
    const found = await get('/api/v4/users?username=BOB', bearer(token))
    expect(found.statusCode).toBe(200)
    expect(found.json()).toEqual([
      {
        id: f.bob.id,
        username: 'bob',
        name: 'Bob',
        state: 'active',
        locked: false,
        avatar_url: null,
        web_url: `${server.settings.issuer}/bob`,
      },
    ])
    expect(found.headers['x-total']).toBe('1')
    expect((await get('/api/v4/users?username=nobody', bearer(token))).json()).toEqual([])
    const all = await get('/api/v4/users', bearer(token))
    expect([all.statusCode, all.json()]).toEqual([
      403,
      { message: '403 Forbidden - Not authorized to access /api/v4/users' },
    ])
    expect((await get('/api/v4/users?username=bob&search=a', bearer(token))).statusCode).toBe(403)
    const searched = await get('/api/v4/users?search=PAGER', bearer(await tokenWith(['read_user'], admin)))
    expect(searched.json().map((u: { username: string }) => u.username)).toEqual([
      'pager-admin',
      ...[1, 2, 3, 4, 5].map((n) => `pager${n}`),
    ])
  })

  it("pages as GitLab's offset pagination: page and per_page, every header, Link included", async () => {
    const token = await tokenWith(['read_user'], admin)
    const first = await get('/api/v4/users?search=pager&per_page=2', bearer(token))
    expect(first.json().map((u: { username: string }) => u.username)).toEqual(['pager-admin', 'pager1'])
    expect(first.headers).toMatchObject({
      'x-page': '1',
      'x-per-page': '2',
      'x-next-page': '2',
      'x-prev-page': '',
      'x-total': '6',
      'x-total-pages': '3',
    })
    const links = Object.fromEntries(
      String(first.headers.link)
        .split(', ')
        .map((entry) => {
          const [, href, rel] = /^<([^>]+)>; rel="(\w+)"$/.exec(entry) ?? []
          const url = new URL(href as string)
          return [
            rel,
            `${url.origin}${url.pathname} ${url.searchParams.get('search')} ${url.searchParams.get('page')}/${url.searchParams.get('per_page')}`,
          ]
        }),
    )
    // on the issuer, as GitLab builds them on its configured host
    const users = `${server.settings.issuer}/api/v4/users pager`
    expect(links).toEqual({ next: `${users} 2/2`, first: `${users} 1/2`, last: `${users} 3/2` })
    const last = await get('/api/v4/users?search=pager&per_page=2&page=3', bearer(token))
    expect(last.json().map((u: { username: string }) => u.username)).toEqual(['pager4', 'pager5'])
    expect(last.headers).toMatchObject({ 'x-page': '3', 'x-next-page': '', 'x-prev-page': '2' })
    // a token in the query string is not repeated in the links
    const viaQuery = await get(`/api/v4/users?search=pager&per_page=2&access_token=${token}`)
    expect([viaQuery.statusCode, String(viaQuery.headers.link).includes('token')]).toEqual([200, false])
    const beyond = await get('/api/v4/users?search=pager&per_page=2&page=9', bearer(token))
    expect([beyond.json(), beyond.headers['x-total-pages']]).toEqual([[], '3'])
    // 20 by default, at most 100; below 1 is refused as GitLab refuses it
    expect((await get('/api/v4/users?search=pager', bearer(token))).headers['x-per-page']).toBe('20')
    expect((await get('/api/v4/users?search=pager&per_page=500', bearer(token))).headers['x-per-page']).toBe('100')
    for (const [query, error] of [
      ['per_page=0', 'per_page does not have a valid value'],
      ['page=0', 'page does not have a valid value'],
    ]) {
      const refused = await get(`/api/v4/users?search=pager&${query}`, bearer(token))
      expect([refused.statusCode, refused.json()]).toEqual([400, { error }])
    }
    const tokens = await get('/api/v4/personal_access_tokens?per_page=1', bearer(await tokenWith(['read_api'])))
    expect(tokens.headers['x-per-page']).toBe('1')
  })

  it('PUT /user takes its attributes from the query string as well as the body (the body wins)', async () => {
    const token = await tokenWith(['api'])
    const viaQuery = await server.app.inject({
      method: 'PUT',
      url: '/api/v4/user?bio=From%20the%20query',
      headers: bearer(token),
    })
    expect([viaQuery.statusCode, viaQuery.json().bio]).toEqual([200, 'From the query'])
    const both = await server.app.inject({
      method: 'PUT',
      url: '/api/v4/user?bio=query&location=Query%20town',
      headers: bearer(token),
      payload: { bio: 'body' },
    })
    expect(both.json()).toMatchObject({ bio: 'body', location: 'Query town' })
    const unknown = await server.app.inject({
      method: 'PUT',
      url: '/api/v4/user?admin=true',
      headers: bearer(token),
      payload: { bio: 'x' },
    })
    expect([unknown.statusCode, unknown.json().is_admin]).toEqual([200, undefined])
  })
})

describe("GitLab's Applications API (lib/api/applications.rb), for administrators", () => {
  const administratorToken = async (username: string, scopes = ['api']) => {
    const { user } = await createUser(server.db, { username, password: 'long enough password', admin: true })
    return tokenWith(scopes, user.id)
  }
  const send = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string, payload?: Record<string, unknown>) =>
    server.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) })

  it('creates (201 with the secret once), lists, renews and deletes instance-wide applications', async () => {
    const token = await administratorToken('apps-admin')
    const created = await send('POST', '/api/v4/applications', token, {
      name: 'Terraform app',
      redirect_uri: 'https://tf.example/cb https://tf.example/other',
      scopes: 'read_user openid',
    })
    expect(created.statusCode).toBe(201)
    const body = created.json()
    expect(Object.keys(body).sort()).toEqual(
      ['id', 'application_id', 'application_name', 'callback_url', 'confidential', 'secret'].sort(),
    )
    expect(body).toMatchObject({
      application_name: 'Terraform app',
      callback_url: 'https://tf.example/cb\nhttps://tf.example/other',
      confidential: true,
    })
    const row = await server.db
      .selectFrom('applications')
      .selectAll()
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow()
    expect([row.uid, row.owner_id, row.scopes]).toEqual([body.application_id, null, ['read_user', 'openid']])
    const listed = (await send('GET', '/api/v4/applications', token)).json()
    expect(listed).toContainEqual({
      id: body.id,
      application_id: body.application_id,
      application_name: 'Terraform app',
      callback_url: body.callback_url,
      confidential: true,
    })
    // a user's own applications are not the instance's: not listed, not deleted here
    const { application: alices } = await createApplication(server.db, {
      name: "Alice's app",
      redirectUris: ['https://alice.example/cb'],
      scopes: ['read_user'],
      ownerId: f.alice.id,
    })
    const relisted = (await send('GET', '/api/v4/applications', token)).json()
    expect(relisted.map((a: { id: number }) => a.id)).toContain(body.id)
    expect(relisted.map((a: { id: number }) => a.id)).not.toContain(alices.id)
    expect((await send('DELETE', `/api/v4/applications/${alices.id}`, token)).statusCode).toBe(404)
    expect((await send('POST', `/api/v4/applications/${alices.id}/renew-secret`, token)).statusCode).toBe(404)
    const renewed = await send('POST', `/api/v4/applications/${body.id}/renew-secret`, token)
    expect(renewed.statusCode).toBe(201)
    expect(renewed.json().secret).not.toBe(body.secret)
    const digestNow = (
      await server.db
        .selectFrom('applications')
        .select('secret_digest')
        .where('id', '=', body.id)
        .executeTakeFirstOrThrow()
    ).secret_digest
    expect(digestNow?.equals(row.secret_digest as Buffer)).toBe(false)
    const deleted = await send('DELETE', `/api/v4/applications/${body.id}`, token)
    expect([deleted.statusCode, deleted.body]).toEqual([204, ''])
    const again = await send('DELETE', `/api/v4/applications/${body.id}`, token)
    expect([again.statusCode, again.json()]).toEqual([404, { message: '404 Application Not Found' }])
  })

  it('refuses what GitLab refuses: a non-administrator (403), read scopes for writes, bad attributes (400 by attribute)', async () => {
    const alice = await tokenWith(['api'])
    expect((await send('GET', '/api/v4/applications', alice)).json()).toEqual({ message: '403 Forbidden' })
    const readOnly = await administratorToken('apps-reader', ['read_api'])
    expect((await send('GET', '/api/v4/applications', readOnly)).statusCode).toBe(200)
    expect(
      (
        await send('POST', '/api/v4/applications', readOnly, {
          name: 'x',
          redirect_uri: 'https://x.example/cb',
          scopes: 'api',
        })
      ).statusCode,
    ).toBe(403)
    const token = await administratorToken('apps-admin2')
    const bad = await send('POST', '/api/v4/applications', token, {
      name: 'x',
      redirect_uri: 'not a uri',
      scopes: 'sudo_everything',
    })
    expect(bad.statusCode).toBe(400)
    expect(Object.keys(bad.json().message).sort()).toEqual(['redirect_uri', 'scopes'])
    // the attributes may come in the query string
    const viaQuery = await server.app.inject({
      method: 'POST',
      url: '/api/v4/applications?name=Query%20app&redirect_uri=https%3A%2F%2Fq.example%2Fcb&scopes=read_user&confidential=false',
      headers: bearer(token),
    })
    expect([viaQuery.statusCode, viaQuery.json().confidential, viaQuery.json().secret]).toEqual([201, false, ''])
  })
})

describe('every /api/v4 answer is what the OpenAPI document says', () => {
  it('each operation, called as a client calls it, answers a documented status with a body of its schema', async () => {
    const document = (await get('/openapi.json')).json()
    const { user } = await createUser(server.db, {
      username: 'doc-admin',
      password: 'long enough password',
      admin: true,
    })
    const token = bearer(await tokenWith(['api'], user.id))
    const made = await server.app.inject({
      method: 'POST',
      url: '/api/v4/applications',
      headers: token,
      payload: { name: 'Documented', redirect_uri: 'https://doc.example/cb', scopes: 'read_user' },
    })
    const calls: Array<{ method: 'GET' | 'POST' | 'PUT' | 'DELETE'; path: string; url: string; payload?: object }> = [
      { method: 'GET', path: '/api/v4/user', url: '/api/v4/user' },
      { method: 'PUT', path: '/api/v4/user', url: '/api/v4/user?bio=documented' },
      { method: 'GET', path: '/api/v4/users', url: '/api/v4/users?per_page=2' },
      { method: 'GET', path: '/api/v4/users', url: '/api/v4/users?per_page=0' },
      { method: 'GET', path: '/api/v4/users/{id}', url: `/api/v4/users/${f.bob.id}` },
      { method: 'GET', path: '/api/v4/users/{id}', url: '/api/v4/users/999999' },
      { method: 'GET', path: '/api/v4/version', url: '/api/v4/version' },
      { method: 'GET', path: '/api/v4/personal_access_tokens', url: '/api/v4/personal_access_tokens' },
      { method: 'GET', path: '/api/v4/applications', url: '/api/v4/applications' },
      {
        method: 'POST',
        path: '/api/v4/applications',
        url: '/api/v4/applications',
        payload: { name: 'x', redirect_uri: 'nope', scopes: 'api' },
      },
      {
        method: 'POST',
        path: '/api/v4/applications/{id}/renew-secret',
        url: `/api/v4/applications/${made.json().id}/renew-secret`,
      },
      { method: 'DELETE', path: '/api/v4/applications/{id}', url: `/api/v4/applications/${made.json().id}` },
      { method: 'DELETE', path: '/api/v4/applications/{id}', url: `/api/v4/applications/${made.json().id}` },
      { method: 'GET', path: '/api/v4/audit_events', url: '/api/v4/audit_events?per_page=2' },
      { method: 'GET', path: '/api/v4/audit_events', url: '/api/v4/audit_events?entity_id=1' },
      { method: 'GET', path: '/api/v4/audit_events/{id}', url: '/api/v4/audit_events/1' },
      { method: 'GET', path: '/api/v4/audit_events/{id}', url: '/api/v4/audit_events/999999' },
    ]
    const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/api/v4'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    // every documented /api/v4 operation is called here
    expect([...new Set(calls.map((c) => `${c.method} ${c.path}`))].sort()).toEqual(documented.sort())
    const problems = [
      undocumentedAnswer(document, {
        method: 'POST',
        path: '/api/v4/applications',
        status: made.statusCode,
        body: made.json(),
      }),
    ]
    for (const call of calls) {
      const answer = await server.app.inject({
        method: call.method,
        url: call.url,
        headers: token,
        ...(call.payload ? { payload: call.payload } : {}),
      })
      const body = answer.body === '' ? undefined : answer.json()
      problems.push(
        undocumentedAnswer(document, { method: call.method, path: call.path, status: answer.statusCode, body }),
      )
    }
    expect(problems.filter(Boolean)).toEqual([])
  })
})

// Doorkeeper's invalid_request, as GitLab's Oauth::TokenInfoController answers a missing or bad token
const INVALID_REQUEST = {
  error: 'invalid_request',
  error_description:
    'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.',
}

describe('GET /oauth/token/info (GitLab shape and errors)', () => {
  it('describes a token', async () => {
    const t = await tokenWith(['read_user', 'read_api'])
    const res = await get('/oauth/token/info', bearer(t))
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({
      resource_owner_id: f.alice.id,
      scope: ['read_user', 'read_api'],
      scopes: ['read_user', 'read_api'],
      application: { uid: f.web.uid },
    })
    expect(body.expires_in).toBeGreaterThan(7100)
    expect(body.expires_in_seconds).toBe(body.expires_in)
    expect((await get(`/oauth/token/info?access_token=${t}`)).statusCode).toBe(200)
  })
  it("GitLab's 400 invalid_request for a missing, unknown, expired or revoked token", async () => {
    const expired = await tokenWith(['openid'])
    await sql`update access_tokens set expires_at = now() - interval '1 second' where scopes = array['openid']`.execute(
      server.db,
    )
    const revoked = await tokenWith(['profile'])
    await sql`update access_tokens set revoked_at = now() where scopes = array['profile']`.execute(server.db)
    for (const headers of [{}, bearer('cmpa_nothing'), bearer(expired), bearer(revoked)]) {
      const res = await get('/oauth/token/info', headers)
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual(INVALID_REQUEST)
      expect(res.headers['cache-control']).toContain('no-store')
    }
  })
  it('a request with no token at all gets a challenge without an error code (RFC 6750 3.1)', async () => {
    const res = await get('/oauth/token/info')
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]+"$/)
    const bad = await get('/oauth/token/info', bearer('cmpa_nothing'))
    expect(bad.headers['www-authenticate']).toMatch(
      /^Bearer realm="[^"]+", error="invalid_request", error_description="/,
    )
  })
  it("a locked user's access token is not described, and his refresh token introspects inactive", async () => {
    const { user } = await createUser(server.db, { username: 'locked-out', password: 'long enough password' })
    const pair = await issueToken(server, { applicationId: f.web.id, userId: user.id, scopes: ['api'], refresh: true })
    await sql`update users set locked = true where id = ${user.id}`.execute(server.db)
    const info = await get('/oauth/token/info', bearer(pair.access_token))
    expect(info.statusCode).toBe(400)
    expect(info.json()).toEqual(INVALID_REQUEST)
    for (const token of [pair.access_token, pair.refresh_token as string]) {
      const introspection = await server.app.inject({
        method: 'POST',
        url: '/oauth/introspect',
        headers: {
          authorization: basic(f.web.uid, f.web.secret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams({ token }).toString(),
      })
      expect(introspection.json()).toEqual({ active: false })
    }
  })
})

describe('OpenID Connect Core 5.3 userinfo', () => {
  it('needs the openid scope; releases profile and email claims only for their scopes', async () => {
    const readUser = await tokenWith(['read_user'])
    const openid = await tokenWith(['openid'])
    // each token twice: looked up, then cached
    for (const _time of ['looked up', 'cached']) {
      const without = await get('/oauth/userinfo', bearer(readUser))
      expect(without.statusCode).toBe(403)
      expect(without.json()).toMatchObject({ error: 'insufficient_scope', scope: 'openid' })
      expect((await get('/oauth/userinfo', bearer(openid))).json()).toEqual({ sub: String(f.alice.id) })
    }
    const full = (await get('/oauth/userinfo', bearer(await tokenWith(['openid', 'email'])))).json()
    expect(full).toEqual({ sub: String(f.alice.id), email: 'alice@example.org', email_verified: true })
  })

  it('the JWKS publishes the signing key without its private part', async () => {
    const res = await get('/oauth/discovery/keys')
    const { keys } = res.json() as { keys: Array<Record<string, string>> }
    expect(keys.length).toBeGreaterThan(0)
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' })
    for (const key of keys) expect(key).not.toHaveProperty('d')
  })
})
