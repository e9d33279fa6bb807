/**
 * Shared by the OAuth benchmarks: loads tools from the oauth-server package (autocannon,
 * oidc-provider, fastify), runs each server under test in its own child process so the load
 * generator does not share its event loop, and prints results.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { benchDatabase } from './support.ts'

const fromOAuthPackage = createRequire(new URL('../packages/oauth-server/package.json', import.meta.url))

export async function load<T>(name: string): Promise<T> {
  const module = (await import(pathToFileURL(fromOAuthPackage.resolve(name)).href)) as { default?: T }
  return (module.default ?? module) as T
}

export interface CannonRequest {
  method?: string
  path: string
  headers?: Record<string, string>
  body?: string
  setupRequest?: (request: CannonRequest) => CannonRequest
}

export interface CannonResult {
  requests: { average: number; total: number }
  latency: { p50: number; p99: number }
  non2xx: number
  errors: number
  duration: number
}

type Autocannon = (options: Record<string, unknown>) => Promise<CannonResult>

export async function cannon(
  url: string,
  options: { requests?: CannonRequest[]; duration?: number; amount?: number; connections?: number },
): Promise<CannonResult> {
  const autocannon = await load<Autocannon>('autocannon')
  const started = performance.now()
  const result = await autocannon({
    url,
    connections: options.connections ?? 16,
    pipelining: 1,
    ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? 10 }),
    requests: options.requests,
  })
  // autocannon reports whole seconds; short fixed-amount runs need the real wall time
  return { ...result, duration: (performance.now() - started) / 1000 }
}

/**
 * Forks this script in `mode`; resolves with the first message the child sends (its port and
 * fixtures). With BENCH_CPU_PROF=<dir> every server writes a V8 CPU profile there when stopped.
 */
export function startChild<T>(script: string, mode: string): Promise<{ child: ChildProcess; ready: T }> {
  const profile = process.env.BENCH_CPU_PROF
  const child = fork(script, [mode], {
    execArgv: [
      '--experimental-strip-types',
      '--disable-warning=ExperimentalWarning',
      ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${mode} did not start in 120 s`)), 120_000)
    child.once('message', (message) => {
      clearTimeout(timer)
      resolve({ child, ready: message as T })
    })
    child.once('exit', (code) => reject(new Error(`${mode} exited with ${code}`)))
  })
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/**
 * Turns of each server within a round, alternating: on a shared machine a burst of other load
 * lasting a second or two then falls on every server of a round, not on one of them only (rounds
 * of one 4-second run each put bare Fastify between 16,900 and 26,700 req/s within one run, and
 * our CPU per code exchange between 140 and 350 us).
 */
export const TURNS = 4

/** A round's turns of one server as one result: requests and time summed, the median p50, the slowest p99. */
function merged(turns: CannonResult[]): CannonResult {
  const sum = (pick: (r: CannonResult) => number) => turns.reduce((total, r) => total + pick(r), 0)
  const p50s = turns.map((r) => r.latency.p50).sort((a, b) => a - b)
  return {
    requests: { total: sum((r) => r.requests.total), average: sum((r) => r.requests.total) / sum((r) => r.duration) },
    latency: { p50: p50s[Math.floor(p50s.length / 2)] ?? 0, p99: Math.max(...turns.map((r) => r.latency.p99)) },
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    duration: sum((r) => r.duration),
  }
}

/**
 * One round side by side: `load` runs for `seconds` on each server, in `TURNS` turns that
 * alternate between the servers; each server's turns merged into one result, in `servers` order.
 */
export async function alternating<S>(
  servers: readonly S[],
  seconds: number,
  load: (server: S, seconds: number) => Promise<CannonResult>,
): Promise<CannonResult[]> {
  const turns: CannonResult[][] = servers.map(() => [])
  for (let turn = 0; turn < TURNS; turn++) {
    for (const [i, server] of servers.entries()) turns[i]?.push(await load(server, seconds / TURNS))
  }
  return turns.map(merged)
}

/** Successful requests per second over the whole run (autocannon's per-second average is coarse on short runs). */
export const throughput = (result: CannonResult): number =>
  Math.max(0, result.requests.total - result.non2xx - result.errors) / result.duration

export function row(name: string, result: CannonResult): string {
  const rps = throughput(result).toFixed(0).padStart(8)
  return `${name.padEnd(44)} ${rps} req/s  p50 ${String(result.latency.p50).padStart(4)} ms  p99 ${String(result.latency.p99).padStart(4)} ms  non-2xx ${result.non2xx}  errors ${result.errors}`
}

/**
 * Our server's side of a benchmark: a fresh database (dropped by `close`), the user `bench` and
 * a confidential application `Bench` with scope api redirecting to `redirectUri`.
 */
export async function benchAccount(redirectUri: string) {
  const { oauthService } = await import('../packages/oauth-server/src/service.ts')
  const { createApplication, createUser } = await import('../packages/oauth-server/src/accounts.ts')
  const database = await benchDatabase<import('../packages/oauth-server/src/db/schema.ts').OAuthDB>(
    'oauthbench',
    oauthService.migrationsDir,
  )
  const { user } = await createUser(database.db, { username: 'bench', password: 'bench password', name: 'Bench' })
  const { application, secret } = await createApplication(database.db, {
    name: 'Bench',
    redirectUris: [redirectUri],
    scopes: ['api'],
  })
  return { database, user, application, secret: secret as string }
}

/** One code exchange by hand at `tokenUrl`: proves the request shape and yields tokens to use. */
export async function exchangeCode(
  tokenUrl: string,
  authorization: string,
  form: Record<string, string>,
): Promise<{ access_token: string; refresh_token?: string }> {
  const response = await fetch(tokenUrl, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', ...form }),
  })
  const tokens = (await response.json()) as { access_token: string; refresh_token?: string }
  if (response.status !== 200 || !tokens.refresh_token) {
    throw new Error(`${tokenUrl} exchange answered ${response.status}: ${JSON.stringify(tokens)}`)
  }
  return tokens
}
