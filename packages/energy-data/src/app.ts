import { type Database, readMigrations, registerPlatform, serverOptions, service } from '@campus/shared'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { publicViews } from './dashboard/plugin.ts'
import type { EnergyDatabase } from './db/schema.ts'
import { energyErrors } from './errors.ts'

export interface EnergyAppOptions {
  database: Database<unknown>
  logLevel?: string
}

/** The data API as a Fastify instance, not listening. */
export async function buildApp(options: EnergyAppOptions): Promise<FastifyInstance> {
  const app = Fastify(
    serverOptions('energy-data', options.logLevel ?? 'silent', energyErrors),
  ).withTypeProvider<TypeBoxTypeProvider>()
  await registerPlatform(app, {
    service: 'energy-data',
    errors: energyErrors,
    db: options.database.db as never,
    migrations: readMigrations(service('energy').migrationsDir),
    openapi: {
      info: {
        title: 'data API',
        version: '1.0.3',
        description: 'Energy, water and weather measurements of the campus in 15-minute buckets.',
        license: { name: 'Apache 2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0.html' },
      },
      healthTags: ['Developers'],
    },
  })
  await app.register(publicViews, { db: options.database.db as Kysely<EnergyDatabase> })
  return app
}
