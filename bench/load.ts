/**
 * Load as every benchmark makes it: autocannon, timed by the wall clock, and rounds that
 * alternate the servers under comparison in turns.
 */
import autocannon from 'autocannon'

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
  /** seconds, by the wall clock */
  duration: number
}

export async function cannon(
  url: string,
  options: {
    requests?: CannonRequest[]
    headers?: Record<string, string>
    duration?: number
    amount?: number
    connections?: number
  },
): Promise<CannonResult> {
  const started = performance.now()
  const result = await autocannon({
    url,
    connections: options.connections ?? 16,
    pipelining: 1,
    ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? 10 }),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.requests ? { requests: options.requests as autocannon.Request[] } : {}),
  })
  // autocannon reports whole seconds; short runs need the real wall time
  return { ...result, duration: (performance.now() - started) / 1000 }
}

/** Successful requests per second over the whole run (autocannon's per-second average is coarse on short runs). */
export const throughput = (result: CannonResult): number =>
  Math.max(0, result.requests.total - result.non2xx - result.errors) / result.duration

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
