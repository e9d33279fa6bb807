import { type Database, readMigrations, registerPlatform, serverOptions, service } from '@campus/shared'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { oauthErrors } from './errors.ts'

export interface OAuthAppOptions {
  database: Database<unknown>
  logLevel?: string
}

/** The authorization server as a Fastify instance, not listening. */
export async function buildApp(options: OAuthAppOptions): Promise<FastifyInstance> {
  const app = Fastify(
    serverOptions('oauth-server', options.logLevel ?? 'silent'),
  ).withTypeProvider<TypeBoxTypeProvider>()
  await registerPlatform(app, {
    service: 'oauth-server',
    errors: oauthErrors,
    db: options.database.db as never,
    migrations: readMigrations(service('oauth').migrationsDir),
    openapi: {
      info: {
        title: 'OAuth 2.0 authorization server',
        version: '1.0.0',
        description: 'Authorization code, implicit, password and refresh flows, and the /api/v4 surface.',
      },
    },
  })
  return app
}
