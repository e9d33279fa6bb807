/**
 * Soak: a real oauth-server process under a fixed request rate on loopback for SOAK_SECONDS
 * (default 60), mixing GET /api/v4/user, GET /oauth/token/info, POST /oauth/introspect and
 * password-grant token requests, while its /metrics are sampled every second (RSS, heap,
 * event-loop delay p99). Prints the series summary, the RSS slope over the second half and the
 * error count; exits 1 on any error or when RSS grows beyond SOAK_RSS_GROWTH_MB over the second
 * half (default 48; judged on runs of 30 s or more), or its maximum passes SOAK_RSS_MAX_MB
 * (default 768).
 *
 *   node --experimental-strip-types bench/soak-oauth.ts
 *   SOAK_SECONDS=10 node --experimental-strip-types bench/soak-oauth.ts      (CI)
 *   SOAK_RATE=300 SOAK_PASSWORD_RATE=4 (defaults 100 and 2) ...                                   (requests/s)
 */
import { randomBytes } from 'node:crypto'
import { benchDatabase } from './support.ts'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60)
const RATE = Number(process.env.SOAK_RATE ?? 100)
// argon2id costs ~130 ms of a core per password check: a few a second is realistic
const PASSWORD_RATE = Number(process.env.SOAK_PASSWORD_RATE ?? 2)
const RSS_GROWTH_MB = Number(process.env.SOAK_RSS_GROWTH_MB ?? 48)
const RSS_MAX_MB = Number(process.env.SOAK_RSS_MAX_MB ?? 768)
// Over a few seconds the native arenas of argon2's hashes still grow while the heap is flat: a
// slope from five samples extrapolates that warm-up, so short runs judge the maximum only.
const TREND_MIN_SECONDS = 30
const MAX_IN_FLIGHT = 512
const TICK_MS = 20

const { launchService } = await import('../packages/shared/src/index.ts')
const { oauthService } = await import('../packages/oauth-server/src/service.ts')
const { createApplication, createUser } = await import('../packages/oauth-server/src/accounts.ts')
const { issueTokens, newGrantId } = await import('../packages/oauth-server/src/grants/issue.ts')
type OAuthDB = import('../packages/oauth-server/src/db/schema.ts').OAuthDB

const database = await benchDatabase<OAuthDB>('oauthsoak', oauthService.migrationsDir)
const PASSWORD = 'soak password 1234'
const { user } = await createUser(database.db, { username: 'soak', password: PASSWORD, name: 'Soak' })
const { application, secret } = await createApplication(database.db, {
  name: 'Soak',
  redirectUris: ['https://soak.example/cb'],
  scopes: ['api', 'read_user'],
})
const token = await issueTokens(database.db, {
  applicationId: application.id,
  userId: user.id,
  scopes: ['api'],
  grantId: newGrantId(),
  refresh: false,
})
const secretKey = randomBytes(32).toString('hex')
const server = await launchService(oauthService, {
  env: {
    OAUTH_DATABASE_URL: database.url,
    OAUTH_SECRET_KEY: secretKey,
    LOG_LEVEL: 'warn',
    // the load comes from one IP and signs in with the right password: no throttling expected
    OAUTH_THROTTLE_IP_LIMIT: '1000000',
  },
})

const basic = `Basic ${Buffer.from(`${application.uid}:${secret}`).toString('base64')}`
const form = { 'content-type': 'application/x-www-form-urlencoded', authorization: basic }
const requests: Array<() => Promise<Response>> = [
  () => fetch(`${server.url}/api/v4/user`, { headers: { authorization: `Bearer ${token.access_token}` } }),
  () => fetch(`${server.url}/oauth/token/info`, { headers: { authorization: `Bearer ${token.access_token}` } }),
  () =>
    fetch(`${server.url}/oauth/introspect`, {
      method: 'POST',
      headers: form,
      body: new URLSearchParams({ token: token.access_token }).toString(),
    }),
]
const passwordGrant = () =>
  fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: form,
    body: new URLSearchParams({ grant_type: 'password', username: 'soak', password: PASSWORD }).toString(),
  })

let sent = 0
let completed = 0
let errors = 0
let inFlight = 0
const errorSamples = new Set<string>()
function send(make: () => Promise<Response>) {
  if (inFlight >= MAX_IN_FLIGHT) {
    errors++
    errorSamples.add('overload: too many requests in flight')
    return
  }
  inFlight++
  sent++
  make()
    .then(async (response) => {
      await response.arrayBuffer()
      if (response.status !== 200) {
        errors++
        errorSamples.add(`status ${response.status}`)
      }
    })
    .catch((error: unknown) => {
      errors++
      errorSamples.add(String((error as Error).message))
    })
    .finally(() => {
      inFlight--
      completed++
    })
}

interface Sample {
  t: number
  rss: number
  heap: number
  lagP99: number
}
const samples: Sample[] = []
function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : Number.NaN
}
async function sample(t: number) {
  try {
    const text = await (await fetch(`${server.url}/metrics`)).text()
    samples.push({
      t,
      rss: metric(text, 'process_resident_memory_bytes'),
      heap: metric(text, 'nodejs_heap_size_used_bytes'),
      lagP99: metric(text, 'nodejs_eventloop_lag_p99_seconds'),
    })
  } catch (error) {
    errors++
    errorSamples.add(`metrics: ${(error as Error).message}`)
  }
}

const started = performance.now()
let dueMain = 0
let duePassword = 0
let nextSample = 0
await new Promise<void>((resolve) => {
  const timer = setInterval(() => {
    const elapsed = (performance.now() - started) / 1000
    if (elapsed >= SECONDS) {
      clearInterval(timer)
      resolve()
      return
    }
    // fixed rate: send what the clock says is due, whatever the answers' pace
    while (dueMain < elapsed * RATE) {
      send(requests[Math.floor(dueMain) % requests.length] as () => Promise<Response>)
      dueMain++
    }
    while (duePassword < elapsed * PASSWORD_RATE) {
      send(passwordGrant)
      duePassword++
    }
    if (elapsed >= nextSample) {
      void sample(Math.round(elapsed))
      nextSample++
    }
  }, TICK_MS)
})
const drainDeadline = performance.now() + 10_000
while (inFlight > 0 && performance.now() < drainDeadline) await new Promise((r) => setTimeout(r, 20))
const duration = (performance.now() - started) / 1000
const drainSeconds = duration - SECONDS
const exitCode = await server.stop('SIGTERM')
await database.close()

const mb = (bytes: number) => bytes / 1024 / 1024
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b)
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)] ?? Number.NaN
function slope(points: Sample[]): number {
  // least squares, bytes per second
  const n = points.length
  if (n < 2) return 0
  const mt = points.reduce((s, p) => s + p.t, 0) / n
  const mr = points.reduce((s, p) => s + p.rss, 0) / n
  const num = points.reduce((s, p) => s + (p.t - mt) * (p.rss - mr), 0)
  const den = points.reduce((s, p) => s + (p.t - mt) ** 2, 0)
  return den ? num / den : 0
}
const secondHalf = samples.filter((s) => s.t >= SECONDS / 2)
const rssSlope = slope(secondHalf)
const halfGrowthMb = mb(rssSlope * (SECONDS / 2))
const rss = samples.map((s) => s.rss)
const lags = samples.map((s) => s.lagP99 * 1000)
const heaps = samples.map((s) => s.heap)

console.log(
  `soak: ${SECONDS} s at ${RATE} req/s (+${PASSWORD_RATE} password grants/s), ${duration.toFixed(1)} s in all`,
)
console.log(
  `requests: ${sent} sent, ${completed} answered, ${errors} errors; the last answer came ${drainSeconds.toFixed(1)} s after the load stopped`,
)
console.log(
  `RSS MB: first ${mb(rss[0] ?? 0).toFixed(1)}  median ${mb(median(rss)).toFixed(1)}  max ${mb(Math.max(...rss)).toFixed(1)}  last ${mb(rss.at(-1) ?? 0).toFixed(1)}`,
)
console.log(
  `RSS slope, second half: ${(mb(rssSlope) * 60).toFixed(2)} MB/min (${halfGrowthMb.toFixed(1)} MB over ${SECONDS / 2} s; bound ${RSS_GROWTH_MB} MB` +
    `${SECONDS >= TREND_MIN_SECONDS ? '' : `, not judged under ${TREND_MIN_SECONDS} s`})`,
)
console.log(
  `heap used MB: first ${mb(heaps[0] ?? 0).toFixed(1)}  median ${mb(median(heaps)).toFixed(1)}  max ${mb(Math.max(...heaps)).toFixed(1)}`,
)
console.log(
  `event-loop lag p99 ms: median ${median(lags).toFixed(1)}  max ${Math.max(...lags).toFixed(1)}  (${samples.length} samples)`,
)
console.log(`server exit code after SIGTERM: ${exitCode}`)
if (errorSamples.size) console.log(`errors seen: ${[...errorSamples].slice(0, 5).join('; ')}`)

const failures: string[] = []
if (errors > 0) failures.push(`${errors} errors`)
if (samples.length < Math.min(SECONDS, 5) / 2) failures.push('too few metric samples')
if (SECONDS >= TREND_MIN_SECONDS && halfGrowthMb > RSS_GROWTH_MB)
  failures.push(`RSS grew ${halfGrowthMb.toFixed(1)} MB over the second half`)
if (mb(Math.max(...rss)) > RSS_MAX_MB) failures.push(`RSS reached ${mb(Math.max(...rss)).toFixed(0)} MB`)
if (exitCode !== 0) failures.push(`server exited ${exitCode}`)
if (failures.length) {
  console.log(`FAIL: ${failures.join(', ')}`)
  process.exit(1)
}
console.log('OK')
