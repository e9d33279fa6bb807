/**
 * Races on PostgreSQL with real concurrency: many HTTP requests in flight at once against one
 * listening server, each on its own pool connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication } from '../../src/accounts.ts'
import { digest } from '../../src/domain/secrets.ts'
import type { OAuthApp } from '../../src/oauth-app.ts'
import { basic, exchangeCode, issueCode, postForm, seed, startServer, type TestServer } from '../helpers.ts'
import { newCode, redemptionsWaiting, waitFor } from './direct.ts'
import { postgresServer } from './processes.ts'

type Seeded = Awaited<ReturnType<typeof seed>>

describe('races on one code and one refresh token', () => {
  let server: TestServer
  let data: Seeded

  beforeAll(async () => {
    server = await startServer()
    data = await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => server?.close())

  const auth = () => ({ authorization: basic(data.web.uid, data.web.secret) })

  async function family(grantId: string) {
    const access = await server.db
      .selectFrom('access_tokens')
      .select(['id', 'revoked_at'])
      .where('grant_id', '=', grantId)
      .execute()
    const refresh = await server.db
      .selectFrom('refresh_tokens')
      .select(['id', 'rotated_at', 'revoked_at'])
      .where('grant_id', '=', grantId)
      .execute()
    return { access, refresh }
  }

  it('50 parallel redemptions of one code: exactly one token, and the replays end its grant', async () => {
    const redirectUri = 'https://client.example/cb'
    const code = await issueCode(server, { client: data.web, userId: data.alice.id, redirectUri, scopes: ['api'] })
    const results = await Promise.all(
      Array.from({ length: 50 }, () => exchangeCode(server.url, code, redirectUri, auth())),
    )
    const winners = results.filter((r) => r.status === 200)
    const losers = results.filter((r) => r.status !== 200)
    expect(winners).toHaveLength(1)
    expect(losers).toHaveLength(49)
    for (const loser of losers) expect([loser.status, loser.body.error]).toEqual([400, 'invalid_grant'])

    const row = await server.db
      .selectFrom('authorization_codes')
      .select(['grant_id', 'consumed_at'])
      .where('digest', '=', digest(code))
      .executeTakeFirstOrThrow()
    expect(row.consumed_at).not.toBeNull()
    const { access, refresh } = await family(row.grant_id)
    // one pair was ever issued; the replays revoked it
    expect(access).toHaveLength(1)
    expect(refresh).toHaveLength(1)
    expect(access.every((t) => t.revoked_at !== null)).toBe(true)
    expect(refresh.every((t) => t.revoked_at !== null)).toBe(true)
    const winner = winners[0]?.body as { access_token: string }
    const api = await fetch(new URL('/api/v4/user', server.url), {
      headers: { authorization: `Bearer ${winner.access_token}` },
    })
    expect(api.status).toBe(401)
  })

  it('40 parallel redemptions of 40 codes (redeemed together): each its own working tokens, none revoked', async () => {
    const redirectUri = 'https://client.example/cb'
    const codes = await Promise.all(
      Array.from({ length: 40 }, () =>
        issueCode(server, { client: data.web, userId: data.alice.id, redirectUri, scopes: ['api'] }),
      ),
    )
    const results = await Promise.all(codes.map((code) => exchangeCode(server.url, code, redirectUri, auth())))
    expect(results.map((r) => r.status)).toEqual(codes.map(() => 200))
    const tokens = results.map((r) => (r.body as { access_token: string }).access_token)
    expect(new Set(tokens).size).toBe(40)
    for (const token of tokens) {
      const api = await fetch(new URL('/api/v4/user', server.url), { headers: { authorization: `Bearer ${token}` } })
      expect(api.status).toBe(200)
    }
  })

  it.runIf(postgresServer)(
    'a redemption held up in the database does not hold up the exchanges behind it',
    async () => {
      const redirectUri = 'https://client.example/cb'
      const [held, other] = [await newCode(server.database, data), await newCode(server.database, data)]
      // a side connection holds the first code's row lock: its redemption waits inside the database
      const locker = await server.database.pool.connect()
      await locker.query('begin')
      await locker.query('select 1 from authorization_codes where digest = $1 for update', [digest(held)])
      const first = exchangeCode(server.url, held, redirectUri, auth())
      try {
        await waitFor(
          async () => (await redemptionsWaiting(server.database)) === 1,
          10_000,
          'the first redemption waiting inside the database',
        )
        // the second code is redeemed and answered while the first is still held (with one
        // statement at a time and no way past it, this would wait for the lock until the test times out)
        const second = await exchangeCode(server.url, other, redirectUri, auth())
        expect(second.status).toBe(200)
        expect(await Promise.race([first.then(() => 'answered'), Promise.resolve('waiting')])).toBe('waiting')
      } finally {
        await locker.query('rollback')
        locker.release()
      }
      expect((await first).status).toBe(200)
    },
  )

  it('20 parallel refreshes of one refresh token: one rotation, then the whole family is revoked', async () => {
    const redirectUri = 'https://client.example/cb'
    const code = await issueCode(server, { client: data.web, userId: data.alice.id, redirectUri, scopes: ['api'] })
    const first = await exchangeCode(server.url, code, redirectUri, auth())
    expect(first.status).toBe(200)
    const refreshToken = first.body.refresh_token as string
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        postForm(server.url, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken }, auth()),
      ),
    )
    const winners = results.filter((r) => r.status === 200)
    expect(winners).toHaveLength(1)
    for (const loser of results.filter((r) => r.status !== 200)) {
      expect([loser.status, loser.body.error]).toEqual([400, 'invalid_grant'])
    }

    const grant = await server.db
      .selectFrom('refresh_tokens')
      .select('grant_id')
      .where('digest', '=', digest(refreshToken))
      .executeTakeFirstOrThrow()
    const { access, refresh } = await family(grant.grant_id)
    // the first pair and the winner's pair, nothing else: losers issued nothing
    expect(access).toHaveLength(2)
    expect(refresh).toHaveLength(2)
    expect(refresh.filter((t) => t.rotated_at !== null)).toHaveLength(1)
    // a presentation of an already-rotated token is reuse: nothing of the family stays valid
    expect(access.every((t) => t.revoked_at !== null)).toBe(true)
    expect(refresh.every((t) => t.revoked_at !== null)).toBe(true)
    const winner = winners[0]?.body as { access_token: string; refresh_token: string }
    const api = await fetch(new URL('/api/v4/user', server.url), {
      headers: { authorization: `Bearer ${winner.access_token}` },
    })
    expect(api.status).toBe(401)
    const again = await postForm(
      server.url,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: winner.refresh_token },
      auth(),
    )
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant'])
  })

  it('refreshes racing the deletion of their application: each answered 200 or 4xx, and nothing of it left', async () => {
    const redirectUri = 'https://doomed.example/cb'
    const created = await createApplication(server.db, { name: 'Doomed', redirectUris: [redirectUri], scopes: ['api'] })
    const doomed = { ...created.application, secret: created.secret as string }
    const doomedAuth = { authorization: basic(doomed.uid, doomed.secret) }
    const refreshTokens: string[] = []
    for (let i = 0; i < 20; i++) {
      const code = await issueCode(server, { client: doomed, userId: data.alice.id, redirectUri, scopes: ['api'] })
      refreshTokens.push((await exchangeCode(server.url, code, redirectUri, doomedAuth)).body.refresh_token as string)
    }
    const refreshes = refreshTokens.map((refreshToken) =>
      postForm(server.url, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken }, doomedAuth),
    )
    // another instance deletes it once the first is answered, while the others are in flight
    // (this instance may still hold the client in its cache)
    await Promise.race(refreshes)
    await (server.app as OAuthApp).changes.commit((trx) =>
      trx.deleteFrom('applications').where('id', '=', doomed.id).execute(),
    )
    const outcomes = (await Promise.all(refreshes)).map((answer) =>
      answer.status === 200 ? 'issued' : `${answer.status} ${answer.body.error}`,
    )
    for (const outcome of outcomes) expect(['issued', '400 invalid_grant', '401 invalid_client']).toContain(outcome)
    const left = async (table: 'access_tokens' | 'refresh_tokens') =>
      server.db.selectFrom(table).select('id').where('application_id', '=', doomed.id).execute()
    expect(await left('access_tokens')).toEqual([])
    expect(await left('refresh_tokens')).toEqual([])
  })

  it('sequential refreshes by one client keep rotating without revoking anything', async () => {
    const redirectUri = 'https://client.example/cb'
    const code = await issueCode(server, { client: data.web, userId: data.alice.id, redirectUri, scopes: ['api'] })
    let current = await exchangeCode(server.url, code, redirectUri, auth())
    for (let i = 0; i < 5; i++) {
      current = await postForm(
        server.url,
        '/oauth/token',
        { grant_type: 'refresh_token', refresh_token: current.body.refresh_token as string },
        auth(),
      )
      expect(current.status).toBe(200)
    }
    const api = await fetch(new URL('/api/v4/user', server.url), {
      headers: { authorization: `Bearer ${current.body.access_token as string}` },
    })
    expect(api.status).toBe(200)
  })
})
