/**
 * Faults: the database connection cut in the middle of a token request (through a TCP proxy the
 * test controls), and SIGTERM to a real server process under load.
 */
import { createHash } from 'node:crypto'
import { createDatabase, type Database, type RunningService } from '@campus/shared'
import { createTestDatabase, startTcpProxy, type TcpProxy, type TestDatabase } from '@campus/shared/testing'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildApp } from '../../src/app.ts'
import { defaultSettings } from '../../src/config.ts'
import type { OAuthDB } from '../../src/db/schema.ts'
import { digest } from '../../src/domain/secrets.ts'
import { REDEMPTIONS_IN_FLIGHT } from '../../src/grants/issue.ts'
import { oauthService } from '../../src/service.ts'
import { memoryThrottle } from '../../src/throttle.ts'
import { basic, exchangeCode, seed } from '../helpers.ts'
import { newCode, redemptionsWaiting, waitFor } from './direct.ts'
import { onPostgresServer, sharedDeployment, startOAuthProcess } from './processes.ts'

type Seeded = Awaited<ReturnType<typeof seed>>

onPostgresServer('database connection cut mid-request', () => {
  let database: TestDatabase<OAuthDB>
  let proxy: TcpProxy
  let proxied: Database<OAuthDB>
  let app: FastifyInstance
  let base: string
  let data: Seeded

  beforeAll(async () => {
    database = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
    const target = new URL(database.url)
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432))
    // client_connection_check_interval: PostgreSQL aborts a statement whose client is gone
    // instead of committing it for nobody (see the README's operations notes)
    const url = new URL(proxy.rewrite(database.url))
    url.searchParams.set('options', '-c client_connection_check_interval=100')
    proxied = createDatabase<OAuthDB>(url.toString(), { connectionTimeoutMillis: 1000 })
    // long-lived cache entries: only invalidation can explain a fresh answer
    const settings = defaultSettings({ tokenCacheSeconds: 60 })
    data = await seed(database.db, settings.secretKey)
    app = await buildApp({ database: proxied, settings, throttle: memoryThrottle(settings.throttle) })
    base = await app.listen({ port: 0, host: '127.0.0.1' })
    settings.issuer = base
  })

  afterAll(async () => {
    await app?.close()
    await proxied?.close()
    await proxy?.close()
    await database?.close()
  })

  it('fails the token request in flight with a clean 500, writes nothing, turns readiness 503 and recovers', async () => {
    const redirectUri = 'https://client.example/cb'
    const code = await newCode(database, data)
    // a second connection (not through the proxy) holds the code's row lock, so the
    // redemption is certainly inside the database when the connection is cut
    const locker = await database.pool.connect()
    try {
      await locker.query('begin')
      await locker.query('select 1 from authorization_codes where digest = $1 for update', [digest(code)])
      const inFlight = exchangeCode(base, code, redirectUri, { authorization: basic(data.web.uid, data.web.secret) })
      await waitFor(
        async () => {
          const { rows } = await database.pool.query(
            `select count(*)::int as n from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock' and query like '%authorization_codes%'`,
          )
          return rows[0].n > 0
        },
        5000,
        'the redemption waiting on the row lock',
      )
      proxy.cut()
      const failed = await inFlight
      expect(failed.status).toBe(500)
      expect(failed.body).toEqual({ error: 'server_error', error_description: expect.any(String) })
      expect(JSON.stringify(failed.body)).not.toMatch(/ECONN|terminated|connection|at .*:\d+/i)
      // the backend notices its client is gone and gives up the statement before the lock frees
      await waitFor(
        async () => {
          const { rows } = await database.pool.query(
            `select count(*)::int as n from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock' and query like '%authorization_codes%'`,
          )
          return rows[0].n === 0
        },
        5000,
        'the cut-off redemption abandoned by PostgreSQL',
      )
    } finally {
      await locker.query('rollback')
      locker.release()
    }

    // nothing half-written: the code unused, no token of its grant
    const row = await database.db
      .selectFrom('authorization_codes')
      .select(['grant_id', 'consumed_at'])
      .where('digest', '=', digest(code))
      .executeTakeFirstOrThrow()
    expect(row.consumed_at).toBeNull()
    const tokens = await database.db
      .selectFrom('access_tokens')
      .select('id')
      .where('grant_id', '=', row.grant_id)
      .execute()
    expect(tokens).toEqual([])

    const ready = await fetch(new URL('/health/ready', base))
    expect(ready.status).toBe(503)
    const whileDown = await exchangeCode(base, code, redirectUri, {
      authorization: basic(data.web.uid, data.web.secret),
    })
    expect([whileDown.status, whileDown.body.error]).toEqual([500, 'server_error'])

    proxy.restore()
    const recovery = await waitFor(
      async () => (await fetch(new URL('/health/ready', base))).status === 200,
      15_000,
      'readiness after the connection returned',
    )
    console.log(`OAuth fault: readiness back ${Math.round(recovery)} ms after the connection returned`)
    // the same code still redeems: the failed attempt consumed nothing
    const redeemed = await exchangeCode(base, code, redirectUri, {
      authorization: basic(data.web.uid, data.web.secret),
    })
    expect(redeemed.status).toBe(200)
    const api = await fetch(new URL('/api/v4/user', base), {
      headers: { authorization: `Bearer ${redeemed.body.access_token as string}` },
    })
    expect(api.status).toBe(200)
  })

  it('forgets its cached lookups when it loses the invalidation channel: a revocation it could not hear is honoured', async () => {
    const redirectUri = 'https://client.example/cb'
    await waitFor(
      async () => (await fetch(new URL('/health/ready', base))).status === 200,
      15_000,
      'ready before the test',
    )
    const code = await newCode(database, data)
    const token = await exchangeCode(base, code, redirectUri, { authorization: basic(data.web.uid, data.web.secret) })
    expect(token.status).toBe(200)
    const call = () =>
      fetch(new URL('/api/v4/user', base), {
        headers: { authorization: `Bearer ${token.body.access_token as string}` },
      })
    expect((await call()).status).toBe(200) // now cached
    proxy.cut()
    // another instance revokes meanwhile; its notification cannot reach this one
    await database.db
      .updateTable('access_tokens')
      .set({ revoked_at: new Date() })
      .where('digest', '=', digest(token.body.access_token as string))
      .execute()
    await database.pool.query("select pg_notify('oauth_cache_invalidation', 'elsewhere')")
    // while the channel is down nothing is served from the cache (the database is away too)
    expect((await call()).status).toBe(500)
    proxy.restore()
    await waitFor(
      async () => (await fetch(new URL('/health/ready', base))).status === 200,
      15_000,
      'readiness after the connection returned',
    )
    expect((await call()).status).toBe(401)
  })
})

onPostgresServer('SIGTERM under load on a real server process', () => {
  let database: TestDatabase<OAuthDB>
  let server: RunningService
  let data: Seeded

  beforeAll(async () => {
    database = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
    const deployment = { OAUTH_SECRET_KEY: sharedDeployment().OAUTH_SECRET_KEY as string }
    data = await seed(database.db, createHash('sha256').update(deployment.OAUTH_SECRET_KEY).digest())
    server = await startOAuthProcess(database.url, { ...deployment, LOG_LEVEL: 'info' })
  })

  afterAll(async () => {
    await server?.stop('SIGKILL')
    await database?.close()
  })

  it('finishes the requests in flight, refuses new ones and exits 0', async () => {
    const redirectUri = 'https://client.example/cb'
    // as many as the redemption statements an instance runs at once, sent one after another: a
    // statement held up makes the next exchange go in a statement of its own, so each waits inside
    // the database, where the test can see it (more would wait in the server's queue, unseen)
    const codes = await Promise.all(Array.from({ length: REDEMPTIONS_IN_FLIGHT }, () => newCode(database, data)))
    // a side connection holds the codes' row locks: the redemptions stay in flight until it lets go
    const locker = await database.pool.connect()
    await locker.query('begin')
    await locker.query('select 1 from authorization_codes where digest = any($1) for update', [
      codes.map((c) => digest(c)),
    ])
    const inFlight: Array<ReturnType<typeof exchangeCode>> = []
    try {
      for (const code of codes) {
        inFlight.push(
          exchangeCode(server.url, code, redirectUri, { authorization: basic(data.web.uid, data.web.secret) }),
        )
        await waitFor(
          async () => (await redemptionsWaiting(database)) === inFlight.length,
          10_000,
          `redemption ${inFlight.length} waiting inside the database`,
        )
      }
      server.child.kill('SIGTERM')
      await waitFor(async () => server.output().includes('shutting down'), 5000, 'shutdown starting')
      const late = await fetch(new URL('/health/live', server.url)).then(
        (r) => r.status,
        () => 'refused',
      )
      expect(['refused', 503]).toContain(late)
    } finally {
      await locker.query('rollback')
      locker.release()
    }
    const results = await Promise.all(inFlight)
    expect(results.map((r) => r.status)).toEqual(Array(codes.length).fill(200))
    const code = await server.exited
    if (code !== 0) console.log(server.output().slice(-3000))
    expect(code).toBe(0)
    // and what they answered was committed
    const used = await database.db
      .selectFrom('authorization_codes')
      .select('consumed_at')
      .where(
        'digest',
        'in',
        codes.map((c) => digest(c)),
      )
      .execute()
    expect(used.every((r) => r.consumed_at !== null)).toBe(true)
  })
})
