/** The request-duration histogram reads exactly as prom-client's own Histogram would print it. */
import { Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { RequestDurations } from '../src/server/durations.ts'

describe('RequestDurations', () => {
  it('prints the text and JSON a prom-client Histogram prints for the same observations', async () => {
    const reference = new Registry()
    const ours = new Registry()
    for (const registry of [reference, ours]) registry.setDefaultLabels({ service: 'test' })
    const histogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration in seconds, by method, route and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [reference],
    })
    const durations = new RequestDurations()
    ours.registerMetric(durations as never)

    // bounds themselves, values between them, past the last one, and a route with a quote in it
    const answers: Array<[string, string, number, number]> = [
      ['GET', '/things/:id', 200, 0.005],
      ['GET', '/things/:id', 200, 0.0051],
      ['GET', '/things/:id', 404, 0.3],
      ['HEAD', '/things/:id', 200, 0],
      ['GET', '/things/:id', 200, 10],
      ['POST', '/say/"hi"', 201, 12.5],
      ['GET', 'unmatched', 404, 0.0004],
      ['GET', '/things/:id', 200, 1.2345],
    ]
    const series = new Map<string, ReturnType<RequestDurations['series']>>()
    for (const [method, route, status, seconds] of answers) {
      histogram.observe({ method, route, status_code: String(status) }, seconds)
      const key = `${method} ${route} ${status}`
      let s = series.get(key)
      if (!s) {
        s = durations.series(method, route, status)
        series.set(key, s)
      }
      s.observe(seconds)
    }

    const text = await ours.metrics()
    expect(text).toBe(await reference.metrics())
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="+Inf",service="test",method="GET",route="/things/:id",status_code="200"} 4',
    )
    // exemplars are not kept here: prom-client's JSON names them null when none was given
    const withoutExemplars = (metrics: Awaited<ReturnType<Registry['getMetricsAsJSON']>>) =>
      metrics.map((m) => ({
        ...m,
        values: m.values.map((value) => {
          const { exemplar: _, ...rest } = value as typeof value & { exemplar?: unknown }
          return rest
        }),
      }))
    expect(await ours.getMetricsAsJSON()).toEqual(withoutExemplars(await reference.getMetricsAsJSON()))

    histogram.reset()
    durations.reset()
    // prom-client forgets its series on reset; ours keeps them at zero until they are observed again
    expect(await ours.metrics()).toContain(
      'http_request_duration_seconds_count{service="test",method="GET",route="/things/:id",status_code="200"} 0',
    )
  })
})
