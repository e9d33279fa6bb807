import { fileURLToPath } from 'node:url'
import type { ServiceDescriptor } from '@campus/shared'

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url))

/**
 * The client id of the data API's people-facing side at the OAuth server: the dashboard's and
 * Swagger UI's sign-in and `energy login`'s device flow. `pnpm start` registers it.
 */
export const FIRST_PARTY_CLIENT_ID = 'energy-dashboard'

/** The days of measurements a demo seeds, up to now (`npm start`'s DEMO_DAYS, `pnpm energy demo --days`). */
export const DEMO_DAYS = 400

/** What the stack, the tests and the benchmarks need to know to run this service. */
export const energyService: ServiceDescriptor = {
  name: 'energy',
  title: 'Energy data API',
  portEnv: 'ENERGY_PORT',
  defaultPort: 8000,
  databaseUrlEnv: 'ENERGY_DATABASE_URL',
  migrationsDir: path('../../../migrations/energy'),
  serverEntry: path('./server.ts'),
  cliEntry: path('./cli.ts'),
  // exports keep ~3 MB each live; a small young generation and a bounded old one keep RSS
  // flat under long exports (docs/RELIABILITY.md)
  nodeOptions: ['--max-semi-space-size=4', '--max-old-space-size=192'],
}
