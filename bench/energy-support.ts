/** What the energy benchmarks share: the service started as its own process on a random port. */
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { service } from '../packages/shared/src/index.ts'

/** Node flags from `override` (space separated), else the service's own production flags. */
export function energyNodeFlags(override: string | undefined): string[] {
  return override === undefined ? [...service('energy').nodeOptions] : override.split(' ').filter(Boolean)
}

/**
 * Starts energy-data on `databaseUrl` with `nodeFlags`, rate limits out of the way (a benchmark
 * measures the service, not its limiter); warnings and errors it logs go to stderr.
 */
export function startEnergyService(
  databaseUrl: string,
  nodeFlags: string[],
): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      '--experimental-strip-types',
      '--disable-warning=ExperimentalWarning',
      service('energy').serverEntry,
    ],
    {
      env: {
        ...process.env,
        ENERGY_DATABASE_URL: databaseUrl,
        ENERGY_PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        MIGRATE_ON_START: 'false',
        ENERGY_RATE_LIMIT_KEY: '1000000000',
        ENERGY_RATE_LIMIT_PUBLIC: '1000000000',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('service did not start within 30 s')), 30_000)
    child.once('exit', (code) => reject(new Error(`service exited ${code}`)))
    // request lines (LOG_LEVEL=info, as in production) are read and dropped
    createInterface({ input: child.stdout! }).on('line', (text) => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(text)
      if (match) {
        clearTimeout(timer)
        resolve({ child, base: match[1] as string })
      }
      if (/"level":(40|50|60)/.test(text)) process.stderr.write(`service: ${text}\n`)
    })
  })
}
