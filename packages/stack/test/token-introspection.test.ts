/**
 * The data API's token check (RFC 7662 introspection, `TokenIntrospector`) against a real OAuth
 * server, reached through a TCP proxy the test can cut, on a clock the test moves: the cache's
 * bounds are rules, so they are proven with time under the test's control.
 */
import { startTcpProxy, type TcpProxy } from '@campus/shared/testing'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { AuthorizationServerUnreachable, TokenIntrospector } from '../../energy-data/src/auth/introspection.ts'
import { changeMechanism } from '../../oauth-server/src/changes/commit.ts'
import { digest } from '../../oauth-server/src/domain/secrets.ts'
import { upsertResourceServer } from '../../oauth-server/src/repositories/applications.ts'
import { basic, issueToken, postForm, seed, startServer, type TestServer } from '../../oauth-server/test/helpers.ts'

const SECRET = 'the-resource-server-secret-of-the-data-api'
let server: TestServer
let proxy: TcpProxy
let fixtures: Awaited<ReturnType<typeof seed>>
let clock: number

beforeAll(async () => {
  server = await startServer()
  fixtures = await seed(server.db, server.settings.secretKey)
  await changeMechanism(server.db, { cacheSeconds: 0, notify: false }).commit((trx) =>
    upsertResourceServer(trx, { uid: 'energy-data', name: 'Energy data API', secretDigest: digest(SECRET) }),
  )
  proxy = await startTcpProxy('127.0.0.1', Number(new URL(server.url).port))
})
afterAll(async () => {
  await proxy?.close()
  await server?.close()
})
beforeEach(() => {
  clock = Date.now()
  proxy.restore()
})

/** Issuer: the server's URL; reached: through the proxy (as ENERGY_OAUTH_URL does in containers). */
function introspector(secret = SECRET) {
  return new TokenIntrospector(
    {
      issuer: server.url,
      reachAt: proxy.rewrite(server.url).replace(/\/$/, ''),
      clientId: 'energy-data',
      clientSecret: secret,
      cacheSeconds: 5,
      staleSeconds: 60,
    },
    () => clock,
  )
}

const newToken = async () =>
  (await issueToken(server, { applicationId: fixtures.web.id, userId: fixtures.alice.id, scopes: ['read_energy'] }))
    .access_token

describe('the data API checks tokens by introspection (RFC 7662)', () => {
  it('asks where ENERGY_OAUTH_URL says, and learns the scopes, client and user', async () => {
    const tokens = introspector()
    expect(await tokens.check(await newToken())).toMatchObject({
      scopes: ['read_energy'],
      clientId: fixtures.web.uid,
      username: 'alice',
    })
    proxy.cut()
    await expect(tokens.check(await newToken())).rejects.toBeInstanceOf(AuthorizationServerUnreachable)
  })

  it('an active answer stands for cacheSeconds, then a revocation shows', async () => {
    const tokens = introspector()
    const token = await newToken()
    expect(await tokens.check(token)).toBeDefined()
    const revoked = await postForm(
      server.url,
      '/oauth/revoke',
      { token },
      { authorization: basic(fixtures.web.uid, fixtures.web.secret) },
    )
    expect(revoked.status).toBe(200)
    clock += 4_900
    expect(await tokens.check(token)).toBeDefined()
    clock += 200
    expect(await tokens.check(token)).toBeUndefined()
  })

  it('while the OAuth server cannot be reached, an answer younger than staleSeconds stands; older ones do not', async () => {
    const tokens = introspector()
    const token = await newToken()
    expect(await tokens.check(token)).toBeDefined()
    proxy.cut()
    clock += 30_000
    expect(await tokens.check(token)).toBeDefined()
    clock += 31_000
    await expect(tokens.check(token)).rejects.toBeInstanceOf(AuthorizationServerUnreachable)
    proxy.restore()
    expect(await tokens.check(token)).toBeDefined()
  })

  it('an unknown token is not active; a wrong secret of the data API is no answer about the token', async () => {
    expect(await introspector().check('cmpa_unknown')).toBeUndefined()
    await expect(introspector('not-the-secret').check(await newToken())).rejects.toBeInstanceOf(
      AuthorizationServerUnreachable,
    )
  })

  it('concurrent checks of one token share one introspection', async () => {
    const tokens = introspector()
    const token = await newToken()
    const answers = await Promise.all(Array.from({ length: 20 }, () => tokens.check(token)))
    // one answer object: the same introspection served every caller
    expect(new Set(answers).size).toBe(1)
    expect(answers[0]).toBeDefined()
  })
})
