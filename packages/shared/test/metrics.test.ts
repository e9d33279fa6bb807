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

async function platform(metricsToken?: string): Promise<FastifyInstance> {
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
