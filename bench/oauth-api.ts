/**
 * GET /api/v4/user with a bearer token (one indexed lookup of the token's digest joined to its
 * user, on PostgreSQL) against a bare Fastify route returning the same JSON, side by side.
 * Goal: at least 60% of the bare route's requests/s in the worst of the rounds; each round
 * alternates the two servers in turns of a second.
 *
 *   node --experimental-strip-types bench/oauth-api.ts   (BENCH_SECONDS=12 per server, over all rounds)
 */
import { alternating, type CannonResult, cannon, throughput } from './load.ts'
import { benchAccount, load, row, startChild, stopChild } from './oauth-support.ts'
import { goalLine } from './support.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 12)
// alternating rounds even out the noise of a shared machine
const ROUNDS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 3))
const WARM_UP_SECONDS = 5
const script = new URL(import.meta.url).pathname

interface Ready {
  port: number
  token?: string
  body?: string
}

async function serveOurs(): Promise<void> {
  const { buildApp } = await import('../packages/oauth-server/src/app.ts')
  const { issueTokens, newGrantId } = await import('../packages/oauth-server/src/grants/issue.ts')
  const { database, user, application } = await benchAccount('https://bench.example/cb')
  const tokens = await issueTokens(database.db, {
    applicationId: application.id,
    userId: user.id,
    scopes: ['api'],
    grantId: newGrantId(),
    refresh: false,
  })
  const app = await buildApp({ database })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const check = await fetch(`${address}/api/v4/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
  if (check.status !== 200) throw new Error(`GET /api/v4/user answered ${check.status}`)
  process.send?.({ port: Number(new URL(address).port), token: tokens.access_token, body: await check.text() })
  process.once('SIGTERM', async () => {
    await app.close()
    await database.close()
    process.exit(0)
  })
}

async function serveBare(): Promise<void> {
  const Fastify =
    await load<
      (options: object) => {
        get(path: string, handler: () => Promise<unknown>): void
        listen(options: { port: number; host: string }): Promise<string>
        close(): Promise<void>
      }
    >('fastify')
  const app = Fastify({ logger: false })
  let payload: unknown = {}
  process.on('message', (message) => {
    payload = JSON.parse(String(message))
    process.send?.('ok')
  })
  app.get('/api/v4/user', async () => payload)
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  process.send?.({ port: Number(new URL(address).port) })
  process.once('SIGTERM', async () => {
    await app.close()
    process.exit(0)
  })
}

async function main(): Promise<void> {
  const ours = await startChild<Ready>(script, 'ours')
  const bare = await startChild<Ready>(script, 'bare')
  try {
    // the bare route answers the very JSON our route produced
    bare.child.send(ours.ready.body as string)
    await new Promise((resolve) => bare.child.once('message', resolve))
    const headers = { authorization: `Bearer ${ours.ready.token}` }
    const oursUrl = `http://127.0.0.1:${ours.ready.port}`
    const bareUrl = `http://127.0.0.1:${bare.ready.port}`
    // warm up both (JIT, pool connections): 5 s, as the first of 4-second rounds after a 2-second
    // warm-up still ran 5-10 % below the later ones for our larger code, the bare route's not
    await cannon(oursUrl, { requests: [{ path: '/api/v4/user', headers }], duration: WARM_UP_SECONDS })
    await cannon(bareUrl, { requests: [{ path: '/api/v4/user' }], duration: WARM_UP_SECONDS })
    const results: Array<[string, CannonResult]> = []
    const servers = [
      { url: bareUrl, request: { path: '/api/v4/user' } },
      { url: oursUrl, request: { path: '/api/v4/user', headers } },
    ]
    for (let round = 1; round <= ROUNDS; round++) {
      const [bareRound, oursRound] = await alternating(servers, SECONDS / ROUNDS, ({ url, request }, duration) =>
        cannon(url, { requests: [request], duration }),
      )
      results.push([`bare Fastify (round ${round})`, bareRound as CannonResult])
      results.push([`GET /api/v4/user + Bearer, PostgreSQL (round ${round})`, oursRound as CannonResult])
    }
    for (const [name, result] of results) console.log(row(name, result))
    const ratios: number[] = []
    for (let i = 0; i + 1 < results.length; i += 2) {
      ratios.push(
        throughput((results[i + 1] as (typeof results)[number])[1]) /
          throughput((results[i] as (typeof results)[number])[1]),
      )
    }
    console.log(
      `\n${goalLine('GET /api/v4/user, requests/s ours/bare Fastify', ratios, { atLeast: 0.6, judge: 'min', unit: '%' })}`,
    )
  } finally {
    await stopChild(ours.child)
    await stopChild(bare.child)
  }
}

const mode = process.argv[2]
if (mode === 'ours') await serveOurs()
else if (mode === 'bare') await serveBare()
else await main()
