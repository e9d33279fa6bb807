import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import Type from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ErrorFormat, HttpError } from '../src/errors.ts'
import { serverOptions } from '../src/server/logging.ts'
import { registerPlatform } from '../src/server/platform.ts'
import { createTestDatabase, type TestDatabase } from '../src/testing/database.ts'
import { fuzzService } from '../src/testing/fuzz.ts'

class DetailError extends HttpError {
  override body() {
    return { detail: this.message }
  }
}
const errors: ErrorFormat = {
  validation: (issues) => new DetailError(422, issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ')),
  notFound: () => new DetailError(404, 'Not Found'),
  clientError: (status, message) => new DetailError(status, message),
  internal: () => new DetailError(500, 'Internal Server Error'),
}
const Detail = Type.Object({ detail: Type.String() })
const errorSchema = Detail as unknown as Record<string, unknown>

async function sampleApp(database: TestDatabase<unknown>, broken: boolean): Promise<FastifyInstance> {
  const app = Fastify(serverOptions('fuzz', 'silent', errors)).withTypeProvider<TypeBoxTypeProvider>()
  await registerPlatform(app, {
    service: 'fuzz',
    errors,
    db: database.db,
    migrations: [],
    openapi: { info: { title: 'fuzz', version: '0' } },
  })
  app.get(
    '/items/:id',
    {
      schema: {
        params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
        querystring: Type.Object({
          sort: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
          tags: Type.Optional(Type.Array(Type.String({ maxLength: 20 }), { maxItems: 5 })),
          since: Type.Optional(Type.String({ format: 'date-time' })),
        }),
        response: {
          200: Type.Object({ id: Type.Integer() }),
          404: Detail,
          422: Type.Object({ detail: Type.String() }),
        },
      },
    },
    async (request) => {
      if (broken && request.query.sort === 'desc') throw new TypeError('cannot read properties of undefined')
      if (request.params.id > 50_000) throw new DetailError(404, 'no such item')
      return { id: request.params.id }
    },
  )
  app.post(
    '/items',
    {
      schema: {
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 50 }), size: Type.Integer() }),
        response: { 201: Type.Object({ name: Type.String() }), 422: Detail },
      },
    },
    async (request, reply) => reply.code(201).send({ name: request.body.name }),
  )
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app
}

/** 400 requests at the sample's /items routes, from the document it serves. */
async function fuzzItems(app: FastifyInstance) {
  return fuzzService({
    port: (app.server.address() as { port: number }).port,
    document: (await app.inject('/openapi.json')).json(),
    runs: 400,
    seed: 42,
    errorSchema,
    skip: (_method, path) => !path.startsWith('/items'),
  })
}

describe('OpenAPI fuzzer', () => {
  let database: TestDatabase<unknown>
  beforeAll(async () => {
    database = await createTestDatabase<unknown>('fuzz', mkdtempSync(join(tmpdir(), 'fuzz-')))
  })
  afterAll(async () => database?.close())

  it('sends generated and hostile requests and finds a well-behaved service clean', async () => {
    const app = await sampleApp(database, false)
    try {
      const report = await fuzzItems(app)
      expect(report.requests).toBe(400)
      expect(report.byStatus['200']).toBeGreaterThan(0)
      expect(report.byStatus['422']).toBeGreaterThan(0)
      expect(Object.keys(report.byStatus).every((s) => Number(s) < 500)).toBe(true)
    } finally {
      await app.close()
    }
  })

  it('refuses Infinity and NaN where a number is declared', async () => {
    const app = await sampleApp(database, false)
    try {
      for (const value of ['Infinity', '-Infinity', 'NaN']) {
        const response = await app.inject(`/items/${value}`)
        expect(response.statusCode).toBe(422)
        expect(response.json().detail).toMatch(/^path\.id: /)
      }
    } finally {
      await app.close()
    }
  })

  it('fails on a service that answers 500 for some input', async () => {
    const app = await sampleApp(database, true)
    try {
      await expect(fuzzItems(app)).rejects.toThrow(/-> 500/)
    } finally {
      await app.close()
    }
  })
})
