import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database } from '../src/db/database.ts'
import { migrate, readMigrations } from '../src/db/migrator.ts'
import { type ErrorFormat, HttpError } from '../src/errors.ts'
import { serverOptions } from '../src/server/logging.ts'
import { registerPlatform } from '../src/server/platform.ts'
import { createTestDatabase, type TestDatabase } from '../src/testing/database.ts'
import { startTcpProxy, type TcpProxy } from '../src/testing/tcp-proxy.ts'

const errors: ErrorFormat = {
  validation: (issues) => new HttpError(422, issues.map((i) => i.msg).join('; ')),
  notFound: () => new HttpError(404, 'Not Found'),
  clientError: (status, message) => new HttpError(status, message),
  internal: () => new HttpError(500, 'Internal Server Error'),
}

const migrationsDir = mkdtempSync(join(tmpdir(), 'ready-'))
writeFileSync(join(migrationsDir, '0001_one.sql'), 'create table one (id int);')

/** A bare app with the platform over `db`, the migrations being those of the folder now. */
async function platformApp(db: Database<unknown>['db']): Promise<FastifyInstance> {
  const app = Fastify(serverOptions('test', 'silent'))
  await registerPlatform(app, {
    service: 'test',
    errors,
    db,
    migrations: readMigrations(migrationsDir),
    openapi: { info: { title: 'test', version: '0.0.0' } },
  })
  return app
}

describe('health probes', () => {
  let testDb: TestDatabase<unknown>
  let proxy: TcpProxy
  let viaProxy: Database<unknown>
  let app: FastifyInstance

  beforeAll(async () => {
    testDb = await createTestDatabase<unknown>('readiness', migrationsDir)
    const target = new URL(testDb.url)
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432))
    viaProxy = createDatabase(proxy.rewrite(testDb.url), { max: 2, connectionTimeoutMillis: 1000 })
    app = await platformApp(viaProxy.db)
    await app.ready()
  })

  afterAll(async () => {
    await app?.close()
    await viaProxy?.close()
    await proxy?.close()
    await testDb?.close()
  })

  it('ready turns 503 while the database is unreachable and recovers without a restart', async () => {
    expect((await app.inject('/health/ready')).json()).toEqual({ status: 'OK' })

    proxy.cut()
    const down = await app.inject('/health/ready')
    expect(down.statusCode).toBe(503)
    expect(down.json()).toEqual({ status: 'UNAVAILABLE', checks: { database: 'unavailable', migrations: 'unknown' } })
    const live = await app.inject('/health/live')
    expect(live.statusCode).toBe(200)
    expect(live.json()).toEqual({ status: 'OK' })

    proxy.restore()
    let recovered = await app.inject('/health/ready')
    for (let i = 0; i < 20 && recovered.statusCode !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100))
      recovered = await app.inject('/health/ready')
    }
    expect(recovered.statusCode).toBe(200)
    expect(recovered.json()).toEqual({ status: 'OK' })
  })

  it('ready is 503 while a migration is pending', async () => {
    writeFileSync(join(migrationsDir, '0002_two.sql'), 'create table two (id int);')
    const pendingApp = await platformApp(testDb.db)
    const response = await pendingApp.inject('/health/ready')
    expect(response.statusCode).toBe(503)
    expect(response.json().checks).toEqual({ database: 'ok', migrations: 'pending: 0002_two.sql' })
    await migrate(testDb.db, readMigrations(migrationsDir))
    expect((await pendingApp.inject('/health/ready')).statusCode).toBe(200)
    await pendingApp.close()
  })

  it('serves OpenAPI, Swagger UI, Prometheus metrics, request ids and the error model', async () => {
    const openapi = await app.inject('/openapi.json')
    expect(openapi.json()).toMatchObject({ openapi: '3.1.0', info: { title: 'test' } })
    expect(openapi.json().paths['/health/ready'].get.responses).toHaveProperty('503')
    const docs = await app.inject('/docs/')
    expect(docs.statusCode).toBe(200)
    expect(docs.body).toContain('swagger-ui')
    const metrics = await app.inject('/metrics')
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/)
    expect(metrics.body).toMatch(/^# HELP /m)
    expect(metrics.body).toContain('http_request_duration_seconds_bucket{')
    const missing = await app.inject({ url: '/nowhere', headers: { 'x-request-id': 'trace-42' } })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ message: 'Not Found' })
    expect(missing.headers['x-request-id']).toBe('trace-42')
    const hostile = await app.inject({ url: '/nowhere', headers: { 'x-request-id': 'a b\u0000c' } })
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe('probe logging', () => {
  it('a probe answered OK is logged at debug, not info, and so is "not ready" before the first OK; other requests at info', async () => {
    const testDb = await createTestDatabase<unknown>('probelog', migrationsDir)
    const lines: Array<{ level: number; req?: { url: string } }> = []
    const options = serverOptions('test', 'info')
    const app = Fastify({
      ...options,
      logger: { ...(options.logger as object), stream: { write: (line: string) => lines.push(JSON.parse(line)) } },
    })
    let broker = 'not subscribed yet'
    try {
      await registerPlatform(app, {
        service: 'test',
        errors,
        db: testDb.db,
        migrations: readMigrations(migrationsDir),
        openapi: { info: { title: 'test', version: '0.0.0' } },
        readiness: { broker: () => broker },
      })
      await migrate(testDb.db, readMigrations(migrationsDir))
      // starting: not ready yet, as a launcher polling readiness sees it
      expect((await app.inject('/health/ready')).statusCode).toBe(503)
      broker = 'ok'
      expect((await app.inject('/health/live')).statusCode).toBe(200)
      expect((await app.inject('/health/ready')).statusCode).toBe(200)
      expect((await app.inject('/nowhere')).statusCode).toBe(404)
      const logged = () => lines.filter((l) => l.req).map((l) => l.req?.url)
      expect(logged()).toEqual(['/nowhere'])
      // ready once, then no more: said at info
      broker = 'disconnected'
      expect((await app.inject('/health/ready')).statusCode).toBe(503)
      expect(logged()).toEqual(['/nowhere', '/health/ready'])
    } finally {
      await app.close()
      await testDb.close()
    }
  })
})
