/**
 * After every flow has run against a real server process: a `pg_dump` of the database and the
 * server's debug log hold none of the tokens, codes, secrets, passwords, cookies or TOTP seeds
 * the run handled.
 */
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import type { RunningService } from '@campus/shared'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createPersonalAccessToken } from '../../src/accounts.ts'
import type { OAuthDB } from '../../src/db/schema.ts'
import { s256 } from '../../src/domain/pkce.ts'
import { oauthService } from '../../src/service.ts'
import { authorizeInBrowser, Browser, basic, PASSWORD, postForm, seed } from '../helpers.ts'
import { onPostgresServer, startOAuthProcess } from './processes.ts'

const run = promisify(execFile)

onPostgresServer('secrets at rest and in logs after every flow', () => {
  let database: TestDatabase<OAuthDB>
  let server: RunningService
  let data: Awaited<ReturnType<typeof seed>>
  const secretKey = randomBytes(32).toString('hex')
  /** Every secret value the run handled, by what it is. */
  const handled = new Map<string, string>()
  const keep = (what: string, value: unknown) => {
    if (typeof value !== 'string' || value.length < 8) throw new Error(`no ${what} to keep: ${String(value)}`)
    handled.set(`${what} #${handled.size}`, value)
  }

  beforeAll(async () => {
    database = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
    data = await seed(database.db, createHash('sha256').update(secretKey).digest())
    server = await startOAuthProcess(database.url, { OAUTH_SECRET_KEY: secretKey, LOG_LEVEL: 'trace' })
  })

  afterAll(async () => {
    await server?.stop()
    await database?.close()
  })

  it('runs every flow, then finds none of its secrets in pg_dump or in the logs', async () => {
    keep('password', PASSWORD)
    keep('server sealing key', secretKey)
    keep('client secret', data.web.secret)
    keep('client secret', data.other.secret)
    keep('TOTP seed', data.bob.otpSecret)
    const web = { authorization: basic(data.web.uid, data.web.secret) }
    const spa = { client_id: data.spa.uid }

    // authorization code without PKCE (confidential client), with openid, through the pages
    const alice = new Browser(server.url)
    const codeQuery = new URLSearchParams({
      client_id: data.web.uid,
      redirect_uri: 'https://client.example/cb',
      response_type: 'code',
      scope: 'api openid',
      state: 'st',
      nonce: 'nonce-value',
    })
    const back = new URL(
      await authorizeInBrowser(alice, `/oauth/authorize?${codeQuery}`, { username: 'alice', password: PASSWORD }),
    )
    const code = back.searchParams.get('code')
    keep('code', code)
    const exchanged = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'authorization_code', code: code as string, redirect_uri: 'https://client.example/cb' },
      web,
    )
    expect(exchanged.status).toBe(200)
    keep('access token', exchanged.body.access_token)
    keep('refresh token', exchanged.body.refresh_token)
    for (const value of alice.cookies.values()) keep('session cookie', value)

    // refresh
    const refreshed = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token as string },
      web,
    )
    expect(refreshed.status).toBe(200)
    keep('access token', refreshed.body.access_token)
    keep('refresh token', refreshed.body.refresh_token)

    // authorization code with PKCE (public client), by the 2FA user through password + TOTP pages
    const verifier = randomBytes(32).toString('base64url')
    keep('PKCE verifier', verifier)
    const bob = new Browser(server.url)
    const pkceQuery = new URLSearchParams({
      ...spa,
      redirect_uri: 'https://spa.example/cb',
      response_type: 'code',
      scope: 'read_user',
      state: 'st2',
      code_challenge: s256(verifier),
      code_challenge_method: 'S256',
    })
    const pkceBack = new URL(
      await authorizeInBrowser(bob, `/oauth/authorize?${pkceQuery}`, {
        username: 'bob',
        password: PASSWORD,
        otpSecret: data.bob.otpSecret,
      }),
    )
    const pkceCode = pkceBack.searchParams.get('code')
    keep('code', pkceCode)
    const pkceToken = await postForm(server.url, '/oauth/token', {
      ...spa,
      grant_type: 'authorization_code',
      code: pkceCode as string,
      redirect_uri: 'https://spa.example/cb',
      code_verifier: verifier,
    })
    expect(pkceToken.status).toBe(200)
    keep('access token', pkceToken.body.access_token)
    keep('refresh token', pkceToken.body.refresh_token)
    for (const value of bob.cookies.values()) keep('session cookie', value)

    // implicit
    const implicitQuery = new URLSearchParams({
      client_id: data.web.uid,
      redirect_uri: 'https://client.example/cb',
      response_type: 'token',
      scope: 'read_user',
      state: 'st3',
    })
    const implicit = new URL(
      await authorizeInBrowser(alice, `/oauth/authorize?${implicitQuery}`, { username: 'alice', password: PASSWORD }),
    )
    const fragment = new URLSearchParams(implicit.hash.slice(1))
    keep('access token', fragment.get('access_token'))

    // password grant
    const password = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'api' },
      web,
    )
    expect(password.status).toBe(200)
    keep('access token', password.body.access_token)
    // client_secret in the body instead of Basic, and a wrong password (logged as a failure)
    const wrong = await postForm(server.url, '/oauth/token', {
      grant_type: 'password',
      username: 'alice',
      password: 'a wrong password 123',
      client_id: data.other.uid,
      client_secret: data.other.secret,
    })
    expect(wrong.status).toBe(400)
    keep('password', 'a wrong password 123')

    // personal access token, and every way of presenting a token to the API
    const pat = await createPersonalAccessToken(database.db, { username: 'alice', name: 'ci', scopes: ['api'] })
    keep('personal access token', pat.token)
    const calls = [
      fetch(new URL('/api/v4/user', server.url), {
        headers: { authorization: `Bearer ${password.body.access_token}` },
      }),
      fetch(new URL(`/api/v4/user?access_token=${refreshed.body.access_token}`, server.url)),
      fetch(new URL('/api/v4/user', server.url), { headers: { 'private-token': pat.token } }),
      fetch(new URL(`/api/v4/user?private_token=${pat.token}`, server.url)),
      fetch(new URL('/oauth/token/info', server.url), {
        headers: { authorization: `Bearer ${pkceToken.body.access_token}` },
      }),
      fetch(new URL('/oauth/userinfo', server.url), {
        headers: { authorization: `Bearer ${refreshed.body.access_token}` },
      }),
    ]
    for (const response of await Promise.all(calls)) expect(response.status).toBe(200)
    const introspected = await postForm(
      server.url,
      '/oauth/introspect',
      { token: fragment.get('access_token') as string },
      web,
    )
    expect(introspected.body.active).toBe(true)
    const revoked = await postForm(server.url, '/oauth/revoke', { token: refreshed.body.refresh_token as string }, web)
    expect(revoked.status).toBe(200)

    const { stdout: dump } = await run('pg_dump', ['--data-only', '--no-owner', database.url], {
      maxBuffer: 256 * 1024 * 1024,
    })
    const logs = server.output()
    expect(dump).toContain('alice') // the dump is real and holds the data
    expect(logs).toContain('/oauth/token') // and so does the log
    const leaks: string[] = []
    for (const [what, value] of handled) {
      if (dump.includes(value)) leaks.push(`${what} in the database dump`)
      if (logs.includes(value)) leaks.push(`${what} in the logs`)
    }
    console.log(
      `OAuth secrets: ${handled.size} values searched in a ${dump.length}-byte pg_dump and ${logs.length} bytes of trace logs`,
    )
    expect(leaks).toEqual([])
  })
})
