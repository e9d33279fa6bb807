import { fileURLToPath } from 'node:url'

/** Root of the repository (packages/shared/src/stack -> four levels up). */
export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url))

export interface ServiceDescriptor {
  /** Short name: `.data/<name>/`, `migrations/<name>/`, log prefix. */
  readonly name: 'oauth' | 'energy'
  readonly title: string
  readonly portEnv: string
  readonly defaultPort: number
  readonly databaseUrlEnv: string
  readonly migrationsDir: string
  readonly serverEntry: string
  readonly cliEntry: string
  /** Node flags the service runs with (heap sizing measured for it). */
  readonly nodeOptions: readonly string[]
}

export const services: readonly ServiceDescriptor[] = [
  {
    name: 'oauth',
    title: 'OAuth server',
    portEnv: 'OAUTH_PORT',
    defaultPort: 3000,
    databaseUrlEnv: 'OAUTH_DATABASE_URL',
    migrationsDir: `${repoRoot}migrations/oauth`,
    serverEntry: `${repoRoot}packages/oauth-server/src/server.ts`,
    cliEntry: `${repoRoot}packages/oauth-server/src/cli.ts`,
    nodeOptions: [],
  },
  {
    name: 'energy',
    title: 'Energy data API',
    portEnv: 'ENERGY_PORT',
    defaultPort: 8000,
    databaseUrlEnv: 'ENERGY_DATABASE_URL',
    migrationsDir: `${repoRoot}migrations/energy`,
    serverEntry: `${repoRoot}packages/energy-data/src/server.ts`,
    cliEntry: `${repoRoot}packages/energy-data/src/cli.ts`,
    // exports keep ~3 MB each live; a small young generation and a bounded old one keep RSS
    // flat under long exports (docs/RELIABILITY.md)
    nodeOptions: ['--max-semi-space-size=4', '--max-old-space-size=192'],
  },
]

export function service(name: ServiceDescriptor['name']): ServiceDescriptor {
  const found = services.find((s) => s.name === name)
  if (!found) throw new Error(`unknown service ${name}`)
  return found
}
