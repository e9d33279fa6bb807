import { createHash, timingSafeEqual } from 'node:crypto'
import { createRequire } from 'node:module'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type * as PromClient from 'prom-client'
import type { ErrorFormat } from '../errors.ts'
import { type DurationSeries, RequestDurations } from './durations.ts'

/** prom-client on first use: a command line, which serves no /metrics, loads neither it nor OpenTelemetry's API. */
const prom = (): typeof PromClient => createRequire(import.meta.url)('prom-client')

export interface MetricsAccess {
  /**
   * The bearer token a scraper must send (`METRICS_TOKEN`). Unset: only a client on this
   * machine, reaching the service directly (no forwarding header), is answered; like GitLab's
   * monitoring allow-list, whose default is loopback.
   */
  token?: string | undefined
  errors: ErrorFormat
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const

/** The machine itself, not a stranger relayed by a reverse proxy on it. */
function fromThisMachine(request: FastifyRequest): boolean {
  const peer = request.socket.remoteAddress ?? ''
  return LOOPBACK.test(peer) && FORWARDING_HEADERS.every((h) => request.headers[h] === undefined)
}

const sha256 = (value: string) => createHash('sha256').update(value).digest()

/** `Authorization: Bearer <token>`, compared in constant time. */
function sendsToken(request: FastifyRequest, token: string): boolean {
  const header = request.headers.authorization ?? ''
  if (!/^bearer /i.test(header)) return false
  return timingSafeEqual(sha256(header.slice(7).trim()), sha256(token))
}

/**
 * A counter of something a service does on its own (not a request), shown at /metrics once the
 * platform is given it (`PlatformOptions.metrics`).
 */
export const serviceCounter = <Label extends string>(name: string, help: string, labelNames: readonly Label[]) =>
  new (prom().Counter)<Label>({ name, help, labelNames, registers: [] })

/** A level a service reports (a queue's length), read when /metrics is scraped. */
export const serviceGauge = (name: string, help: string, collect: () => number) =>
  new (prom().Gauge)({
    name,
    help,
    registers: [],
    collect() {
      this.set(collect())
    },
  })

/** Levels a service reports under labels (one series per thing it watches), read when /metrics is scraped. */
export const serviceLabelledGauge = <Label extends string>(
  name: string,
  help: string,
  labelNames: readonly Label[],
  collect: () => ReadonlyArray<{ labels: Record<Label, string>; value: number }>,
) =>
  new (prom().Gauge)<Label>({
    name,
    help,
    labelNames,
    registers: [],
    collect() {
      this.reset()
      for (const series of collect()) this.set(series.labels as never, series.value)
    },
  })

/**
 * Prometheus text at /metrics: process metrics plus request durations by route and status.
 * Each route records its own answers; `recordUnmatched` records an answer no route gave (a 404
 * of the router), for the platform's onResponse hook to call.
 */
export function registerMetrics(
  app: FastifyInstance,
  service: string,
  access: MetricsAccess,
  extra: readonly PromClient.Metric[] = [],
): { recordUnmatched: (request: FastifyRequest, reply: FastifyReply) => void } {
  const { Registry, collectDefaultMetrics } = prom()
  const registry = new Registry()
  registry.setDefaultLabels({ service })
  collectDefaultMetrics({ register: registry })
  const durations = new RequestDurations()
  registry.registerMetric(durations as never)
  for (const metric of extra) registry.registerMetric(metric)
  /** The series of one route's answers, one per status. */
  const recorder = (method: string, route: string) => {
    const byStatus = new Map<number, DurationSeries>()
    return (status: number, seconds: number) => {
      let series = byStatus.get(status)
      if (!series) {
        series = durations.series(method, route, status)
        byStatus.set(status, series)
      }
      series.observe(seconds)
    }
  }
  // each route records its own answers, its pattern known when it is added: reading
  // request.routeOptions on every answer builds an object each time
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const record = new Map(methods.map((method) => [method, recorder(method, route.url)]))
    const hook = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      record.get(request.method)?.(reply.statusCode, reply.elapsedTime / 1000)
      done()
    }
    route.onResponse = route.onResponse ? [...[route.onResponse].flat(), hook] : [hook]
  })
  // Unmatched URLs share one label so a scanner cannot blow up the series count.
  const unmatched = new Map<string, ReturnType<typeof recorder>>()
  const recordUnmatched = (request: FastifyRequest, reply: FastifyReply) => {
    let record = unmatched.get(request.method)
    if (!record) {
      record = recorder(request.method, 'unmatched')
      unmatched.set(request.method, record)
    }
    record(reply.statusCode, reply.elapsedTime / 1000)
  }
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const { token, errors } = access
    if (token && !sendsToken(request, token)) {
      const refused = errors.clientError(401, 'The metrics need the bearer token (METRICS_TOKEN).')
      return reply
        .code(401)
        .headers(refused.headers)
        .header('www-authenticate', 'Bearer realm="metrics"')
        .send(refused.body())
    }
    if (!token && !fromThisMachine(request)) throw errors.notFound(request.method, request.url)
    reply.type(registry.contentType)
    return registry.metrics()
  })
  return { recordUnmatched }
}
