import { fileURLToPath } from 'node:url'
import type { ServiceDescriptor } from '@campus/shared'

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url))

/** This server's version: its OpenAPI document and `GET /api/v4/version` say it. */
export const OAUTH_SERVER_VERSION = '1.0.0'

/** What the stack, the tests and the benchmarks need to know to run this service. */
export const oauthService: ServiceDescriptor = {
  name: 'oauth',
  title: 'OAuth server',
  portEnv: 'OAUTH_PORT',
  defaultPort: 3000,
  databaseUrlEnv: 'OAUTH_DATABASE_URL',
  migrationsDir: path('../../../migrations/oauth'),
  serverEntry: path('./server.ts'),
  cliEntry: path('./cli.ts'),
  nodeOptions: [],
}
