/**
 * Shared by the OAuth benchmarks: loads tools from the oauth-server package (oidc-provider,
 * fastify), runs each server under test in its own child process so the load
 * generator does not share its event loop, and prints results.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { type CannonResult, throughput } from './load.ts'
import { benchDatabase } from './support.ts'

const fromOAuthPackage = createRequire(new URL('../packages/oauth-server/package.json', import.meta.url))

export async function load<T>(name: string): Promise<T> {
  const module = (await import(pathToFileURL(fromOAuthPackage.resolve(name)).href)) as { default?: T }
  return (module.default ?? module) as T
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
