import type { ChildProcess } from 'node:child_process'
import { launchService } from '@campus/shared'
import { energyService } from '../../src/service.ts'

/** Heap sizing of the production service (its descriptor), unless ENERGY_TEST_NODE_FLAGS says otherwise. */
export const PRODUCTION_NODE_FLAGS =
  process.env.ENERGY_TEST_NODE_FLAGS?.split(' ').filter(Boolean) ?? energyService.nodeOptions

export interface ServerProcess {
  child: ChildProcess
  base: string
  /** Every line the process wrote on stdout and stderr so far. */
  logs: string[]
  /** Resident set size now, bytes. */
  rss(): number
  /** Resolves with the exit code. */
  exited: Promise<number | null>
  stop(): Promise<number | null>
}

/** The energy service as its own process on a free loopback port, seeing only `env` of this process's variables. */
export async function startEnergyProcess(
  env: Record<string, string>,
  nodeFlags: readonly string[] = PRODUCTION_NODE_FLAGS,
): Promise<ServerProcess> {
  const logs: string[] = []
  const server = await launchService(energyService, {
    env: { LOG_LEVEL: 'info', MIGRATE_ON_START: 'false', ...env },
    inheritEnv: false,
    nodeOptions: nodeFlags,
    onLine: (line) => logs.push(line),
  })
  return { ...server, base: server.url, logs, stop: () => server.stop() }
}
