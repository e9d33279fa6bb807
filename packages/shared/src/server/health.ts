import type { FastifyInstance } from 'fastify'
import { type Kysely, sql } from 'kysely'
import Type from 'typebox'
import { type MigrationFile, pendingMigrations } from '../db/migrator.ts'

export const HealthCheck = Type.Object(
  { status: Type.String({ default: 'OK', examples: ['OK'] }) },
  { $id: 'HealthCheck', title: 'HealthCheck' },
)

const NotReady = Type.Object(
  {
    status: Type.Literal('UNAVAILABLE'),
    checks: Type.Object({
      database: Type.String({ description: '"ok" or why the database did not answer' }),
      migrations: Type.String({ description: '"ok" or which migrations are pending' }),
    }),
  },
  { title: 'NotReady' },
)

const CHECK_TIMEOUT_MS = 2000

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** `/health/live`: the process answers. `/health/ready`: the database answers and no migration is pending. */
export function registerHealth<DB>(
  app: FastifyInstance,
  options: { db: Kysely<DB>; migrations: MigrationFile[]; tags?: string[] },
): void {
  const tags = options.tags ?? ['Health']
  app.get(
    '/health/live',
    {
      config: { probe: true },
      schema: {
        tags,
        summary: 'Liveness probe',
        description: 'Answers 200 while the process runs, whatever the state of its dependencies.',
        response: { 200: HealthCheck },
      },
    },
    async () => ({ status: 'OK' }),
  )
  app.get(
    '/health/ready',
    {
      config: { probe: true },
      schema: {
        tags,
        summary: 'Readiness probe',
        description: 'Answers 200 when the database answers and every migration is applied; 503 otherwise.',
        response: { 200: HealthCheck, 503: NotReady },
      },
    },
    async (request, reply) => {
      let database = 'ok'
      let migrations = 'ok'
      try {
        const pending = await withTimeout(
          (async () => {
            await sql`select 1`.execute(options.db)
            return pendingMigrations(options.db, options.migrations)
          })(),
          CHECK_TIMEOUT_MS,
        )
        if (pending.length) migrations = `pending: ${pending.join(', ')}`
      } catch (error) {
        database = 'unavailable'
        migrations = 'unknown'
        request.log.warn({ err: error }, 'readiness check failed')
      }
      if (database === 'ok' && migrations === 'ok') return { status: 'OK' }
      return reply.code(503).send({ status: 'UNAVAILABLE', checks: { database, migrations } })
    },
  )
}
