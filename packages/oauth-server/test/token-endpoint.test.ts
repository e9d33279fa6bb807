import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication, createUser } from '../src/accounts.ts'
import { buildApp } from '../src/app.ts'
import { defaultSettings } from '../src/config.ts'
import { s256 } from '../src/domain/pkce.ts'
import { memoryThrottle } from '../src/throttle.ts'
import { basic, issueCode, PASSWORD, postForm, seed, startServer, type TestServer } from './helpers.ts'

let server: TestServer
let f: Awaited<ReturnType<typeof seed>>
const token = (form: Record<string, string | string[]>, headers?: Record<string, string>) =>
  postForm(server.url, '/oauth/token', form, headers)
const apiUser = (accessToken: string) =>
  fetch(`${server.url}/api/v4/user`, { headers: { authorization: `Bearer ${accessToken}` } })

beforeAll(async () => {
  server = await startServer()
  f = await seed(server.db, server.settings.secretKey)
})
afterAll(async () => {
  await server?.close()
})

const CB = 'https://client.example/cb'

describe('RFC 6749 5.1 successful response', () => {
  it('has GitLab fields, Bearer, 7200 s, and is never cached', async () => {
    const code = await issueCode(server, { client: f.web, userId: f.alice.id, redirectUri: CB, scopes: ['api'] })
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: CB },
      { authorization: basic(f.web.uid, f.web.secret) },
    )
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(
      ['access_token', 'created_at', 'expires_in', 'refresh_token', 'scope', 'token_type'].sort(),
    )
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 7200, scope: 'api' })
    expect(res.body.access_token).toMatch(/^cmpa_[A-Za-z0-9_-]{43}$/)
    expect(Math.abs((res.body.created_at as number) - Date.now() / 1000)).toBeLessThan(60)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('pragma')).toBe('no-cache')
  })
})

describe('RFC 6749 5.2 error response', () => {
  it('invalid_request: grant_type missing', async () => {
    const res = await token({ client_id: f.web.uid, client_secret: f.web.secret })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'Missing required parameter: grant_type.' })
    expect(res.headers.get('cache-control')).toBe('no-store')
  })

  it('invalid_request: a parameter holding the NUL character, which no stored text can (never a 500)', async () => {
    const res = await token({ grant_type: 'password', username: 'ali\u0000ce', password: PASSWORD })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: 'username: must not contain the NUL character',
    })
    const page = await fetch(`${server.url}/oauth/authorize?client_id=a%00b&redirect_uri=x&response_type=code`)
    expect(page.status).toBe(400)
  })

  it('invalid_request: a parameter repeated (3.2)', async () => {
    const res = await token({ grant_type: ['password', 'password'], username: 'alice', password: PASSWORD })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_request')
  })

  it('invalid_request: a body that is not form-encoded', async () => {
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'password', username: 'alice', password: PASSWORD }),
    })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request')
  })

  it('unsupported_grant_type: unknown grant', async () => {
    const res = await token({ grant_type: 'urn:example:unknown', client_id: f.web.uid, client_secret: f.web.secret })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('unsupported_grant_type')
  })

  it('invalid_client: unknown client, 401 with a Basic challenge when Basic was used', async () => {
    const res = await token(
      { grant_type: 'refresh_token', refresh_token: 'x' },
      { authorization: basic('nobody', 'x') },
    )
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('invalid_client')
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic /)
  })

  it('invalid_client: wrong secret, and a confidential client without its secret', async () => {
    const wrong = await token({
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: f.web.uid,
      client_secret: 'cmps_wrong',
    })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error).toBe('invalid_client')
    expect(wrong.headers.get('www-authenticate')).toBeNull()
    const none = await token({ grant_type: 'refresh_token', refresh_token: 'x', client_id: f.web.uid })
    expect(none.status).toBe(401)
    expect(none.body.error).toBe('invalid_client')
  })

  it('invalid_client: authorization_code without any client identification', async () => {
    const res = await token({ grant_type: 'authorization_code', code: 'x', redirect_uri: CB })
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('invalid_client')
  })

  it('invalid_request: two client authentication methods at once (2.3)', async () => {
    const res = await token(
      { grant_type: 'refresh_token', refresh_token: 'x', client_secret: f.web.secret },
      { authorization: basic(f.web.uid, f.web.secret) },
    )
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_request')
  })

  it('unauthorized_client: a grant the application may not use', async () => {
    const { application, secret } = await createApplication(server.db, {
      name: 'Code only',
      redirectUris: [CB],
      scopes: ['api'],
      grantTypes: ['authorization_code'],
    })
    const res = await token({
      grant_type: 'password',
      username: 'alice',
      password: PASSWORD,
      client_id: application.uid,
      client_secret: secret as string,
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('unauthorized_client')
  })

  it('invalid_scope: unknown scope or beyond the application', async () => {
    const unknown = await token({ grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'sudo' })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error).toBe('invalid_scope')
    const beyond = await token({
      grant_type: 'password',
      username: 'alice',
      password: PASSWORD,
      scope: 'api',
      client_id: f.spa.uid,
    })
    expect(beyond.status).toBe(400)
    expect(beyond.body.error).toBe('invalid_scope')
  })
})

describe('RFC 6749 4.1.3 / RFC 9700 4.5: the code is bound, short-lived and single-use', () => {
  it('invalid_grant: code issued to another client', async () => {
    const code = await issueCode(server, { client: f.web, userId: f.alice.id, redirectUri: CB })
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://other.example/cb',
      client_id: f.other.uid,
      client_secret: f.other.secret,
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_grant')
  })

  it('invalid_grant: redirect_uri differs from the authorization request', async () => {
    const code = await issueCode(server, { client: f.web, userId: f.alice.id, redirectUri: CB })
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1/loopback' },
      { authorization: basic(f.web.uid, f.web.secret) },
    )
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_grant')
  })

  it('invalid_request: redirect_uri missing', async () => {
    const code = await issueCode(server, { client: f.web, userId: f.alice.id, redirectUri: CB })
    const res = await token(
      { grant_type: 'authorization_code', code },
      { authorization: basic(f.web.uid, f.web.secret) },
    )
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_request')
  })

  it('invalid_grant: code older than 10 minutes', async () => {
    const code = await issueCode(server, { client: f.web, userId: f.alice.id, redirectUri: CB })
    await sql`update authorization_codes set expires_at = now() - interval '1 second' where consumed_at is null`.execute(
      server.db,
    )
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: CB },
      { authorization: basic(f.web.uid, f.web.secret) },
    )
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_grant')
  })

  it('a replayed code fails and revokes every token issued from it', async () => {
    const code = await issueCode(server, { client: f.web, userId: f.alice.id, redirectUri: CB })
    const form = { grant_type: 'authorization_code', code, redirect_uri: CB }
    const auth = { authorization: basic(f.web.uid, f.web.secret) }
    const first = await token(form, auth)
    expect(first.status).toBe(200)
    expect((await apiUser(first.body.access_token as string)).status).toBe(200)
    const replay = await token(form, auth)
    expect(replay.status).toBe(400)
    expect(replay.body.error).toBe('invalid_grant')
    expect((await apiUser(first.body.access_token as string)).status).toBe(401)
    const refresh = await token(
      { grant_type: 'refresh_token', refresh_token: first.body.refresh_token as string },
      auth,
    )
    expect(refresh.body.error).toBe('invalid_grant')
  })

  it('two concurrent redemptions of one code: exactly one succeeds', async () => {
    const code = await issueCode(server, { client: f.web, userId: f.alice.id, redirectUri: CB })
    const form = { grant_type: 'authorization_code', code, redirect_uri: CB }
    const auth = { authorization: basic(f.web.uid, f.web.secret) }
    const results = await Promise.all([token(form, auth), token(form, auth), token(form, auth)])
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400])
    for (const r of results.filter((r) => r.status === 400)) expect(r.body.error).toBe('invalid_grant')
  })
})

describe('RFC 7636 4.6 PKCE at the token endpoint', () => {
  const verifier = 'v'.repeat(20) + 'erifier-with-enough-length-1234567890'

  it('invalid_grant: a challenge was sent but no verifier comes', async () => {
    const code = await issueCode(server, {
      client: f.spa,
      userId: f.alice.id,
      redirectUri: 'https://spa.example/cb',
      codeChallenge: s256(verifier),
    })
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://spa.example/cb',
      client_id: f.spa.uid,
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_grant')
  })

  it('invalid_grant: the verifier does not match', async () => {
    const code = await issueCode(server, {
      client: f.spa,
      userId: f.alice.id,
      redirectUri: 'https://spa.example/cb',
      codeChallenge: s256(verifier),
    })
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://spa.example/cb',
      client_id: f.spa.uid,
      code_verifier: `${verifier}x`,
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_grant')
  })

  it('invalid_grant: a verifier for a code requested without challenge (downgrade, RFC 9700 2.1.1)', async () => {
    const code = await issueCode(server, { client: f.web, userId: f.alice.id, redirectUri: CB })
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: verifier },
      { authorization: basic(f.web.uid, f.web.secret) },
    )
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_grant')
  })

  it('invalid_request: a malformed verifier', async () => {
    const code = await issueCode(server, {
      client: f.spa,
      userId: f.alice.id,
      redirectUri: 'https://spa.example/cb',
      codeChallenge: s256(verifier),
    })
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://spa.example/cb',
      client_id: f.spa.uid,
      code_verifier: 'short',
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_request')
  })

  it('the matching verifier is accepted', async () => {
    const code = await issueCode(server, {
      client: f.spa,
      userId: f.alice.id,
      redirectUri: 'https://spa.example/cb',
      codeChallenge: s256(verifier),
    })
    const res = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://spa.example/cb',
      client_id: f.spa.uid,
      code_verifier: verifier,
    })
    expect(res.status).toBe(200)
  })
})

describe('RFC 6749 6 / RFC 9700 4.14.2: refresh tokens rotate; reuse revokes the family', () => {
  async function pair() {
    const code = await issueCode(server, {
      client: f.web,
      userId: f.alice.id,
      redirectUri: CB,
      scopes: ['api', 'read_user'],
    })
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: CB },
      { authorization: basic(f.web.uid, f.web.secret) },
    )
    return res.body as { access_token: string; refresh_token: string }
  }
  const auth = () => ({ authorization: basic(f.web.uid, f.web.secret) })

  it('rotation: a new pair, the old access token stops working', async () => {
    const first = await pair()
    const next = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token }, auth())
    expect(next.status).toBe(200)
    expect(next.body.refresh_token).not.toBe(first.refresh_token)
    expect(next.body.scope).toBe('api read_user')
    expect((await apiUser(first.access_token)).status).toBe(401)
    expect((await apiUser(next.body.access_token as string)).status).toBe(200)
  })

  it('works after the access token expired', async () => {
    const first = await pair()
    await sql`update access_tokens set expires_at = now() - interval '1 second'`.execute(server.db)
    expect((await apiUser(first.access_token)).status).toBe(401)
    const next = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token }, auth())
    expect(next.status).toBe(200)
  })

  it('reuse of a rotated refresh token: invalid_grant and the whole family is revoked', async () => {
    const first = await pair()
    const second = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token }, auth())
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token }, auth())
    expect(reuse.status).toBe(400)
    expect(reuse.body.error).toBe('invalid_grant')
    expect((await apiUser(second.body.access_token as string)).status).toBe(401)
    const third = await token(
      { grant_type: 'refresh_token', refresh_token: second.body.refresh_token as string },
      auth(),
    )
    expect(third.body.error).toBe('invalid_grant')
  })

  it('invalid_grant: another client presents the refresh token', async () => {
    const first = await pair()
    const res = await token({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: f.other.uid,
      client_secret: f.other.secret,
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_grant')
  })

  it('scope may narrow (6) but not widen: invalid_scope', async () => {
    const first = await pair()
    const wide = await token(
      { grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'api read_api' },
      auth(),
    )
    expect(wide.status).toBe(400)
    expect(wide.body.error).toBe('invalid_scope')
    const narrow = await token(
      { grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'read_user' },
      auth(),
    )
    expect(narrow.status).toBe(200)
    expect(narrow.body.scope).toBe('read_user')
  })
})

describe('RFC 6749 4.3 password grant', () => {
  it('invalid_grant: wrong password or unknown user', async () => {
    for (const form of [
      { username: 'alice', password: 'wrong password' },
      { username: 'nobody', password: PASSWORD },
    ]) {
      const res = await token({ grant_type: 'password', ...form })
      expect(res.status).toBe(400)
      expect(res.body.error).toBe('invalid_grant')
    }
  })

  it('a user with two-factor authentication is refused before the password check, with the generic error', async () => {
    // GitLab refuses 2FA users before looking at the password: the answer must not confirm it
    const unknown = await token({ grant_type: 'password', username: 'nobody', password: PASSWORD })
    for (const password of [PASSWORD, 'a wrong password']) {
      const res = await token({ grant_type: 'password', username: 'bob', password })
      expect(res.status).toBe(400)
      expect(res.body).toEqual(unknown.body)
      expect(res.body.error).toBe('invalid_grant')
    }
  })

  it('a locked account gets the generic error too, right password or not (as GitLab)', async () => {
    const { user } = await createUser(server.db, { username: 'locked-grant', password: PASSWORD })
    await sql`update users set locked = true where id = ${user.id}`.execute(server.db)
    const unknown = await token({ grant_type: 'password', username: 'nobody', password: PASSWORD })
    const res = await token({ grant_type: 'password', username: 'locked-grant', password: PASSWORD })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(unknown.body)
  })

  it("the username may be the user's email address (GitLab's find_by_login)", async () => {
    const res = await token({ grant_type: 'password', username: 'Alice@Example.org', password: PASSWORD })
    expect(res.status).toBe(200)
    const user = await apiUser(res.body.access_token as string)
    expect(((await user.json()) as { username: string }).username).toBe('alice')
  })

  it('invalid_request: username or password missing', async () => {
    const res = await token({ grant_type: 'password', username: 'alice' })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('invalid_request')
  })

  it('no refresh token in the response', async () => {
    const res = await token({
      grant_type: 'password',
      username: 'alice',
      password: PASSWORD,
      client_id: f.web.uid,
      client_secret: f.web.secret,
    })
    expect(res.status).toBe(200)
    expect(res.body.refresh_token).toBeUndefined()
  })
})

describe('server switches and throttling', () => {
  it('unsupported_grant_type when the password grant is switched off', async () => {
    const app = await buildApp({
      database: server.database,
      settings: defaultSettings({ passwordGrant: false }),
    })
    const res = await app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: 'grant_type=password&username=alice&password=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    await app.close()
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('unsupported_grant_type')
  })

  it('failed password grants are throttled per account, then per IP: 429 with Retry-After', async () => {
    const settings = defaultSettings({ throttle: { accountLimit: 3, ipLimit: 5, windowSeconds: 60 } })
    const app = await buildApp({
      database: server.database,
      settings,
      throttle: memoryThrottle(settings.throttle),
    })
    const attempt = (username: string, password: string) =>
      app.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
    for (let i = 0; i < 3; i++) expect((await attempt('alice', 'wrong password')).statusCode).toBe(400)
    const blocked = await attempt('alice', PASSWORD)
    expect(blocked.statusCode).toBe(429)
    expect(blocked.json().error).toBe('temporarily_unavailable')
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0)
    // per IP: two more failures on other accounts reach the IP limit of 5
    expect((await attempt('carol', 'x')).statusCode).toBe(400)
    expect((await attempt('dave', 'x')).statusCode).toBe(400)
    expect((await attempt('erin', 'x')).statusCode).toBe(429)
    await app.close()
  })
})

describe('RFC 6749 2.3.1 client password', () => {
  it('HTTP Basic credentials are form-urlencoded before base64: percent-escapes are decoded', async () => {
    const { application, secret } = await createApplication(server.db, {
      name: 'Basic',
      redirectUris: [CB],
      scopes: ['read_user'],
    })
    const code = await issueCode(server, { client: application, userId: f.alice.id, redirectUri: CB })
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: CB },
      {
        // every character escaped, as a client may legally send it
        authorization: `Basic ${Buffer.from(
          `${application.uid}:${[...(secret as string)].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')}`,
        ).toString('base64')}`,
      },
    )
    expect(res.status).toBe(200)
  })

  it('invalid_client: a public client presenting a secret', async () => {
    const res = await token({
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: f.spa.uid,
      client_secret: 'anything',
    })
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('invalid_client')
  })

  it('RFC 6749 3.2: unknown parameters are ignored', async () => {
    const code = await issueCode(server, { client: f.web, userId: f.alice.id, redirectUri: CB })
    const res = await token(
      { grant_type: 'authorization_code', code, redirect_uri: CB, resource: 'x', extra: ['1', '2'] },
      { authorization: basic(f.web.uid, f.web.secret) },
    )
    expect(res.status).toBe(200)
  })
})
