/** What the energy benchmarks share: the service started as its own process on a free port. */
import type { ChildProcess } from 'node:child_process'
import { energyService } from '../packages/energy-data/src/service.ts'
import { launchService } from '../packages/shared/src/index.ts'

/** Node flags from `override` (space separated), else the service's own production flags. */
export function energyNodeFlags(override: string | undefined): string[] {
  return override === undefined ? [...energyService.nodeOptions] : override.split(' ').filter(Boolean)
}

/**
 * Starts energy-data on `databaseUrl` with `nodeFlags`, rate limits out of the way (a benchmark
 * measures the service, not its limiter); warnings and errors it logs go to stderr.
 */
export async function startEnergyService(
  databaseUrl: string,
  nodeFlags: string[],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; base: string }> {
  const server = await launchService(energyService, {
    env: {
      ENERGY_DATABASE_URL: databaseUrl,
      // request lines are logged (as in production) and dropped here
      LOG_LEVEL: 'info',
      MIGRATE_ON_START: 'false',
      ENERGY_RATE_LIMIT_KEY: '1000000000',
      ENERGY_RATE_LIMIT_PUBLIC: '1000000000',
      ...env,
    },
    nodeOptions: nodeFlags,
    maxOutput: 0,
    onLine: (text) => {
      if (/"level":(40|50|60)/.test(text) || !text.startsWith('{')) process.stderr.write(`service: ${text}\n`)
    },
  })
  return { child: server.child, base: server.url }
}
