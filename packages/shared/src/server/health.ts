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
    checks: Type.Object(
      {
        database: Type.String({ description: '"ok" or why the database did not answer' }),
        migrations: Type.String({ description: '"ok" or which migrations are pending' }),
      },
      {
        additionalProperties: Type.String({ description: 'A check of the service\u2019s own: "ok" or what is wrong' }),
      },
    ),
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

/** A check of a service's own for readiness: "ok", or what is wrong (then the service is not ready). */
export type ReadinessCheck = () => string | Promise<string>

/**
 * `/health/live`: the process answers. `/health/ready`: the database answers, no migration is
 * pending, and each of the service's own checks says "ok".
 */
export function registerHealth<DB>(
  app: FastifyInstance,
  options: { db: Kysely<DB>; migrations: MigrationFile[]; tags?: string[]; checks?: Record<string, ReadinessCheck> },
): void {
  const tags = options.tags ?? ['Health']
  app.get(
    '/health/live',
    {
      config: { probe: 'live' },
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
      config: { probe: 'ready' },
      schema: {
        tags,
        summary: 'Readiness probe',
        description:
          'Answers 200 when the database answers, every migration is applied and the service\u2019s own checks pass; 503 otherwise.',
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
      const own: Record<string, string> = {}
      for (const [name, check] of Object.entries(options.checks ?? {})) {
        own[name] = await Promise.resolve()
          .then(check)
          .catch((error: unknown) => (error instanceof Error ? error.message : String(error)))
      }
      if (database === 'ok' && migrations === 'ok' && Object.values(own).every((v) => v === 'ok')) {
        return { status: 'OK' }
      }
      return reply.code(503).send({ status: 'UNAVAILABLE', checks: { database, migrations, ...own } })
    },
  )
}
