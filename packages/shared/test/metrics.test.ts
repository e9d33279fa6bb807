/** /metrics is private: a bearer secret (METRICS_TOKEN), or without one the machine itself only. */
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ErrorFormat, HttpError } from '../src/errors.ts'
import { serverOptions } from '../src/server/logging.ts'
import { registerPlatform } from '../src/server/platform.ts'

const errors: ErrorFormat = {
  validation: (issues) => new HttpError(422, issues.map((i) => i.msg).join('; ')),
  notFound: () => new HttpError(404, 'Not Found'),
  clientError: (status, message) => new HttpError(status, message),
  internal: () => new HttpError(500, 'Internal Server Error'),
}

async function platform(metricsToken?: string, routes?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify(serverOptions('test', 'silent'))
  await registerPlatform(app, {
    service: 'test',
    errors,
    // the probes are not called here
    db: {} as never,
    migrations: [],
    openapi: { info: { title: 'test', version: '0.0.0' } },
    metricsToken,
  })
  routes?.(app)
  await app.ready()
  return app
}

const scrape = (app: FastifyInstance, remoteAddress: string, headers: Record<string, string> = {}) =>
  app.inject({ url: '/metrics', remoteAddress, headers })

describe('/metrics is private', () => {
  let open: FastifyInstance
  let guarded: FastifyInstance
  beforeAll(async () => {
    open = await platform()
    guarded = await platform('a-long-random-metrics-secret')
  })
  afterAll(async () => {
    await open?.close()
    await guarded?.close()
  })

  it('without METRICS_TOKEN, only to a client on the machine itself, not through a proxy', async () => {
    for (const local of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      const res = await scrape(open, local)
      expect(res.statusCode, local).toBe(200)
      expect(res.body).toMatch(/^# HELP /m)
    }
    for (const remote of ['203.0.113.5', '10.0.0.2', 'fd00::1'])
      expect((await scrape(open, remote)).statusCode).toBe(404)
    // a reverse proxy on the same host forwards strangers from loopback
    expect((await scrape(open, '127.0.0.1', { 'x-forwarded-for': '203.0.113.5' })).statusCode).toBe(404)
    expect((await scrape(open, '127.0.0.1', { forwarded: 'for=203.0.113.5' })).statusCode).toBe(404)
  })

  it('with METRICS_TOKEN, to whoever sends it as a bearer token, from anywhere', async () => {
    const bearer = { authorization: 'Bearer a-long-random-metrics-secret' }
    expect((await scrape(guarded, '203.0.113.5', bearer)).statusCode).toBe(200)
    const refused: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer a-long-random-metrics-secreT' },
      { authorization: 'Basic x' },
    ]
    for (const headers of refused) {
      const res = await scrape(guarded, '127.0.0.1', headers)
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"')
      expect(res.body).not.toContain('# HELP')
    }
  })
})

describe('request durations', () => {
  it('are counted by method, route pattern and status; unmatched URLs share one label', async () => {
    const app = await platform(undefined, (app) =>
      app.get('/things/:id', async (request, reply) =>
        (request.params as { id: string }).id === '0' ? reply.code(404).send({}) : { ok: true },
      ),
    )
    try {
      for (const url of ['/things/1', '/things/2', '/things/0', '/nowhere/1', '/nowhere/2']) await app.inject({ url })
      await app.inject({ method: 'HEAD', url: '/things/3' })
      const body = (await scrape(app, '127.0.0.1')).body
      const count = (labels: string) =>
        Number(
          body.match(
            new RegExp(
              `^http_request_duration_seconds_count\\{service="test",${labels.replaceAll('/', '\\/')}\\} (\\d+)$`,
              'm',
            ),
          )?.[1] ?? 0,
        )
      expect(count('method="GET",route="/things/:id",status_code="200"')).toBe(2)
      expect(count('method="GET",route="/things/:id",status_code="404"')).toBe(1)
      expect(count('method="HEAD",route="/things/:id",status_code="200"')).toBe(1)
      expect(count('method="GET",route="unmatched",status_code="404"')).toBe(2)
    } finally {
      await app.close()
    }
  })
})
