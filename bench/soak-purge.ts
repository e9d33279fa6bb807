/**
 * Soak of the token purge: PURGE_ROWS (default 1,000,000) access tokens that expired 40 days ago
 * in a real oauth-server's database on PostgreSQL; the token endpoint (client credentials, a token
 * written per request) is loaded in turns of PURGE_TURN_SECONDS (default 3) before the purge
 * (the baseline) and while it runs. The purge runs as another instance of the server would run
 * its sweep: the same `purgeEndedTokens`, its own connection, in batches. Prints the p50/p99 of
 * each side, their ratio (median of turns), the rows purged per second; exits 1 on any error or
 * a row left behind.
 *
 *   node --experimental-strip-types bench/soak-purge.ts      (pnpm bench soak)
 */
import { type CannonResult, cannon } from './load.ts'
import { benchDatabase, goalLine, median } from './support.ts'

const ROWS = Number(process.env.PURGE_ROWS ?? 1_000_000)
const TURN_SECONDS = Number(process.env.PURGE_TURN_SECONDS ?? 3)
const BASELINE_TURNS = 4

const { launchService } = await import('../packages/shared/src/index.ts')
const { oauthService } = await import('../packages/oauth-server/src/service.ts')
const { createApplication, createUser } = await import('../packages/oauth-server/src/accounts.ts')
const { purgeEndedTokens } = await import('../packages/oauth-server/src/repositories/token-purge.ts')
type OAuthDB = import('../packages/oauth-server/src/db/schema.ts').OAuthDB

const database = await benchDatabase<OAuthDB>('oauthpurge', oauthService.migrationsDir)
const { user } = await createUser(database.db, { username: 'purge', password: 'purge password 1234', name: 'Purge' })
const { application, secret } = await createApplication(database.db, {
  name: 'Purge soak',
  redirectUris: ['https://purge.example/cb'],
  scopes: ['api'],
  grantTypes: ['client_credentials'],
  ownerId: user.id,
})
const filled = performance.now()
await database.pool.query(
  `insert into access_tokens (digest, application_id, user_id, scopes, grant_id, created_at, expires_at)
   select sha256(('expired ' || i)::bytea), $1, $2, '{api}', gen_random_uuid(),
          now() - interval '41 days', now() - interval '40 days'
   from generate_series(1, $3::int) as i`,
  [application.id, user.id, ROWS],
)
await database.pool.query('analyze access_tokens')
process.stdout.write(
  `purge soak: ${ROWS} expired access tokens written in ${((performance.now() - filled) / 1000).toFixed(1)} s\n`,
)

const server = await launchService(oauthService, {
  env: { OAUTH_DATABASE_URL: database.url, LOG_LEVEL: 'warn', OAUTH_TOKEN_RETENTION_DAYS: '30' },
})
const authorization = `Basic ${Buffer.from(`${application.uid}:${secret}`).toString('base64')}`
const tokenRequests = (seconds: number) =>
  cannon(`${server.url}/oauth/token`, {
    duration: seconds,
    connections: 8,
    requests: [
      {
        method: 'POST',
        path: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
        body: 'grant_type=client_credentials&scope=api',
      },
    ],
  })

let failed = false
const problems = (result: CannonResult) => result.non2xx + result.errors
const show = (name: string, turns: CannonResult[]) => {
  const p50 = median(turns.map((t) => t.latency.p50))
  const p99 = median(turns.map((t) => t.latency.p99))
  const rate = median(turns.map((t) => t.requests.total / t.duration))
  process.stdout.write(
    `  ${name}: ${turns.length} turns of ${TURN_SECONDS} s, ${rate.toFixed(0)} tokens/s, p50 ${p50} ms, p99 ${p99} ms\n`,
  )
  return p99
}

try {
  await tokenRequests(1) // warm-up
  const baseline: CannonResult[] = []
  for (let turn = 0; turn < BASELINE_TURNS; turn++) baseline.push(await tokenRequests(TURN_SECONDS))
  const started = performance.now()
  let purged: { access_token: number } | undefined
  const purge = purgeEndedTokens(database.db, 30).then((result) => {
    purged = result
  })
  const during: CannonResult[] = []
  while (purged === undefined) during.push(await tokenRequests(TURN_SECONDS))
  await purge
  const seconds = (performance.now() - started) / 1000
  const left = await database.pool.query<{ n: string }>(
    `select count(*) as n from access_tokens where expires_at < now() - interval '30 days'`,
  )
  process.stdout.write(
    `purge soak: ${purged?.access_token} tokens purged in ${seconds.toFixed(1)} s (${((purged?.access_token ?? 0) / seconds).toFixed(0)} rows/s), ${left.rows[0]?.n} left\n`,
  )
  const p99Before = show('before the purge', baseline)
  const p99During = show('while it runs', during)
  process.stdout.write(`${goalLine('token endpoint p99, purging / not', [p99During / p99Before], { atMost: 1.5 })}\n`)
  const errors = [...baseline, ...during].reduce((sum, r) => sum + problems(r), 0)
  if (errors > 0 || purged?.access_token !== ROWS || left.rows[0]?.n !== '0') {
    process.stdout.write(`purge soak: ${errors} failed requests\n`)
    failed = true
  }
} finally {
  await server.stop()
  await database.close()
}
process.exit(failed ? 1 : 0)
