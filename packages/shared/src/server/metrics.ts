import type { FastifyInstance } from 'fastify'
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client'

/** Prometheus text at /metrics: process metrics plus request durations by route and status. */
export function registerMetrics(app: FastifyInstance, service: string): Registry {
  const registry = new Registry()
  registry.setDefaultLabels({ service })
  collectDefaultMetrics({ register: registry })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration in seconds, by method, route and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  app.addHook('onResponse', async (request, reply) => {
    // Unmatched URLs share one label so a scanner cannot blow up the series count.
    const route = request.routeOptions.url ?? 'unmatched'
    duration.observe({ method: request.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000)
  })
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType)
    return registry.metrics()
  })
  return registry
}
