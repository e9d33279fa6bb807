/**
 * Token endpoint work side by side with panva's oidc-provider (in-memory adapter):
 *   - code exchange: POST /token grant_type=authorization_code with PKCE and HTTP Basic,
 *     access + refresh token issued, each code used once (codes made beforehand);
 *   - introspection: POST /token/introspection (RFC 7662) of one live access token.
 * Ours runs on PostgreSQL (BENCH_DATABASE_URL / TEST_DATABASE_URL, default local postgres).
 *
 * Both servers run at once, each in its own process; every round measures both side by side
 * for BENCH_SECONDS each (BENCH_ROUNDS, at least 3), in turns that alternate between them. Exchanges run for a fixed time, not a fixed
 * number: autocannon ends a fixed-number run on its next one-second tick, which understated the
 * faster server by up to a third. Before each round both servers make the same number of fresh
 * codes: half again as many as the fastest exchanges seen so far would use (BENCH_CODES per
 * second before the first); a round that runs out of codes stops the run. Only 2xx answers count.
 *
 *   node --experimental-strip-types bench/oauth-tokens.ts   (BENCH_CODES=3000, BENCH_SECONDS=4)
 */
import type { ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import { alternating, type CannonResult, cannon, throughput } from './load.ts'
import { benchAccount, exchangeCode, load, row, startChild, stopChild } from './oauth-support.ts'
import { goalLine } from './support.ts'

const ROUNDS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 3))
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
/** Exchanges per second assumed before any is measured. */
const FIRST_RATE = Number(process.env.BENCH_CODES ?? 3000)
const script = new URL(import.meta.url).pathname
const REDIRECT_URI = 'https://bench.example/cb'
const VERIFIER = 'bench-verifier-0123456789-0123456789-0123456789'

interface Ready {
  port: number
  tokenPath: string
  introspectionPath: string
  authorization: string
  codes: string[]
  accessToken: string
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

async function serveOurs(): Promise<void> {
  const { buildApp } = await import('../packages/oauth-server/src/app.ts')
  const { digest, generateSecret } = await import('../packages/oauth-server/src/domain/secrets.ts')
  const { s256 } = await import('../packages/oauth-server/src/domain/pkce.ts')
  const { randomUUID } = await import('node:crypto')
  const { database, user, application, secret } = await benchAccount(REDIRECT_URI)
  async function makeCodes(count: number): Promise<string[]> {
    const codes: string[] = []
    for (let start = 0; start < count; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, count - start) }, () => generateSecret('code'))
      codes.push(...batch)
      await database.db
        .insertInto('authorization_codes')
        .values(
          batch.map((code) => ({
            digest: digest(code),
            application_id: application.id,
            user_id: user.id,
            redirect_uri: REDIRECT_URI,
            scopes: ['api'],
            code_challenge: s256(VERIFIER),
            code_challenge_method: 'S256',
            grant_id: randomUUID(),
            expires_at: new Date(Date.now() + 600_000),
          })),
        )
        .execute()
    }
    return codes
  }
  const app = await buildApp({ database })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const authorization = basic(application.uid, secret)
  // the first code proves the exchange and yields the token introspected
  const tokens = await exchangeCode(`${address}/oauth/token`, authorization, {
    code: (await makeCodes(1))[0] as string,
    redirect_uri: REDIRECT_URI,
    code_verifier: VERIFIER,
  })
  serveCodes(makeCodes)
  process.send?.({
    port: Number(new URL(address).port),
    tokenPath: '/oauth/token',
    introspectionPath: '/oauth/introspect',
    authorization,
    codes: [],
    accessToken: tokens.access_token,
  } satisfies Ready)
  process.once('SIGTERM', async () => {
    await app.close()
    await database.close()
    process.exit(0)
  })
}

interface OidcProvider {
  callback(): Parameters<typeof createServer>[1]
  Client: { find(id: string): Promise<unknown> }
  Grant: new (values: Record<string, unknown>) => { addOIDCScope(scope: string): void; save(): Promise<string> }
  AuthorizationCode: new (values: Record<string, unknown>) => { save(): Promise<string> }
}

async function serveOidcProvider(): Promise<void> {
  const Provider = await load<new (issuer: string, config: Record<string, unknown>) => OidcProvider>('oidc-provider')
  // its own in-memory adapter, over a larger LRU: the stock one keeps 1000 entries, fewer than the codes made here,
  const MemoryAdapter = await load<new (model: string, store: unknown) => unknown>(
    'oidc-provider/lib/adapters/memory_adapter.js',
  )
  const LRU = await load<new (options: { maxSize: number }) => unknown>('oidc-provider/lib/helpers/lru.js')
  // evicting nothing within a run, as ours keeps every row
  const store = new LRU({ maxSize: 5_000_000 })
  const clientSecret = 'bench-secret-0123456789-0123456789-0123456789'
  const provider = new Provider('http://127.0.0.1', {
    clients: [
      {
        client_id: 'bench',
        client_secret: clientSecret,
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['api'],
    adapter: (model: string) => new MemoryAdapter(model, store),
    features: { introspection: { enabled: true }, devInteractions: { enabled: false } },
    ttl: { AuthorizationCode: 600, AccessToken: 7200, Grant: 3600, RefreshToken: 86400 },
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    issueRefreshToken: async () => true,
  })
  const server = createServer(provider.callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const client = await provider.Client.find('bench')
  const { s256 } = await import('../packages/oauth-server/src/domain/pkce.ts')
  async function makeCodes(count: number): Promise<string[]> {
    const codes: string[] = []
    for (let i = 0; i < count; i++) {
      const grant = new provider.Grant({ accountId: 'bench', clientId: 'bench' })
      grant.addOIDCScope('api')
      const grantId = await grant.save()
      codes.push(
        await new provider.AuthorizationCode({
          accountId: 'bench',
          client,
          grantId,
          scope: 'api',
          redirectUri: REDIRECT_URI,
          codeChallenge: s256(VERIFIER),
          codeChallengeMethod: 'S256',
        }).save(),
      )
    }
    return codes
  }
  const authorization = basic('bench', clientSecret)
  const tokens = await exchangeCode(`http://127.0.0.1:${port}/token`, authorization, {
    code: (await makeCodes(1))[0] as string,
    redirect_uri: REDIRECT_URI,
    code_verifier: VERIFIER,
  })
  serveCodes(makeCodes)
  process.send?.({
    port,
    tokenPath: '/token',
    introspectionPath: '/token/introspection',
    authorization,
    codes: [],
    accessToken: tokens.access_token,
  } satisfies Ready)
  process.once('SIGTERM', () => {
    server.close()
    process.exit(0)
  })
}

/** A server's side of a top-up: `{ make: n }` from the benchmark is answered with n fresh codes. */
function serveCodes(makeCodes: (count: number) => Promise<string[]>): void {
  process.on('message', async (message: { make: number }) => {
    process.send?.({ codes: await makeCodes(message.make) })
  })
}

/** Has `child` make codes until `ready` holds `count` unused ones. */
async function topUp(child: ChildProcess, ready: Ready, count: number): Promise<void> {
  if (ready.codes.length >= count) return
  const made = new Promise<string[]>((resolve) =>
    child.once('message', (message) => resolve((message as { codes: string[] }).codes)),
  )
  child.send({ make: count - ready.codes.length })
  ready.codes.push(...(await made))
}

/** Codes per round: half again as many as the fastest exchanges seen would use. */
const codesFor = (rate: number) => Math.ceil(1.5 * rate * SECONDS)
/** Requests per second, answered or not: what a turn used up, an upper bound of what it could. */
const attempted = (result: CannonResult) => result.requests.total / result.duration

/** `seconds` of exchanges, each of a code not used before. */
async function exchange(ready: Ready, seconds = SECONDS): Promise<CannonResult> {
  const headers = { authorization: ready.authorization, 'content-type': 'application/x-www-form-urlencoded' }
  return cannon(`http://127.0.0.1:${ready.port}`, {
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: ready.tokenPath,
        headers,
        setupRequest: (request) => ({
          ...request,
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code: ready.codes.pop() as string,
            redirect_uri: REDIRECT_URI,
            code_verifier: VERIFIER,
          }).toString(),
        }),
      },
    ],
  })
}

async function introspect(ready: Ready, seconds: number): Promise<CannonResult> {
  return cannon(`http://127.0.0.1:${ready.port}`, {
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: ready.introspectionPath,
        headers: { authorization: ready.authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: ready.accessToken }).toString(),
      },
    ],
  })
}

async function main(): Promise<void> {
  const ours = await startChild<Ready>(script, 'ours')
  const oidc = await startChild<Ready>(script, 'oidc')
  const servers = [
    ['ours (PostgreSQL)', ours.ready],
    ['oidc-provider (memory)', oidc.ready],
  ] as const
  try {
    let fastest = FIRST_RATE
    const supply = async () => {
      await topUp(ours.child, ours.ready, codesFor(fastest))
      await topUp(oidc.child, oidc.ready, codesFor(fastest))
    }
    // a warm-up round (JIT, pool connections), not counted; it may run out of codes
    for (const [, ready] of servers) {
      await supply()
      fastest = Math.max(fastest, attempted(await exchange(ready)))
    }
    const ratios = { exchange: [] as number[], introspection: [] as number[] }
    for (let round = 1; round <= ROUNDS; round++) {
      await supply()
      const both = [ours.ready, oidc.ready]
      const [oursExchange, oidcExchange] = (await alternating(both, SECONDS, exchange)) as [CannonResult, CannonResult]
      for (const [[name], result] of [
        [servers[0], oursExchange],
        [servers[1], oidcExchange],
      ] as const) {
        if (result.non2xx + result.errors > 0) {
          throw new Error(
            `${name}, round ${round}: ${result.non2xx} exchanges answered other than 2xx, ${result.errors} failed (out of codes? raise BENCH_CODES)`,
          )
        }
        fastest = Math.max(fastest, attempted(result))
      }
      const [oursIntrospect, oidcIntrospect] = (await alternating(both, SECONDS, introspect)) as [
        CannonResult,
        CannonResult,
      ]
      console.log(row(`${servers[0][0]} code exchange (round ${round})`, oursExchange))
      console.log(row(`${servers[1][0]} code exchange (round ${round})`, oidcExchange))
      console.log(row(`${servers[0][0]} introspection (round ${round})`, oursIntrospect))
      console.log(row(`${servers[1][0]} introspection (round ${round})`, oidcIntrospect))
      ratios.exchange.push(throughput(oursExchange) / throughput(oidcExchange))
      ratios.introspection.push(throughput(oursIntrospect) / throughput(oidcIntrospect))
    }
    console.log(`\n${goalLine('code exchange, requests/s ours/oidc-provider', ratios.exchange, { atLeast: 1 })}`)
    console.log(goalLine('introspection, requests/s ours/oidc-provider', ratios.introspection, { atLeast: 1 }))
  } finally {
    await stopChild(ours.child)
    await stopChild(oidc.child)
  }
}

const mode = process.argv[2]
if (mode === 'ours') await serveOurs()
else if (mode === 'oidc') await serveOidcProvider()
else await main()
