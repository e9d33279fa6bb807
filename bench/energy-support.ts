/** What the energy benchmarks share: the service started as its own process on a free port. */
import type { ChildProcess } from 'node:child_process'
import type pg from 'pg'
import { GROUP_COLUMNS } from '../packages/energy-data/src/catalogue/groups.ts'
import { measurementsWritten } from '../packages/energy-data/src/repositories/measurement-writes.ts'
import { inTransaction } from '../packages/energy-data/src/repositories/transaction.ts'
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

/** Ten years (2015-2024) of the water group at 15 minutes, random values: the long export both benches stream. */
export const TEN_YEARS = { from: '2015-01-01T00:00:00Z', to: '2024-12-31T23:45:00Z' }

export async function seedTenYearsOfWater(pool: pg.Pool): Promise<void> {
  const columns = GROUP_COLUMNS.water
  await inTransaction(pool, async (client) => {
    await client.query(
      `insert into water_15m (time_15m, ${columns.join(', ')})
       select t, ${columns.map((_, i) => `round((random() * ${i + 2})::numeric, 3)::float8`).join(', ')}
       from generate_series($1::timestamptz, $2::timestamptz, interval '15 minutes') t on conflict do nothing`,
      [TEN_YEARS.from, TEN_YEARS.to],
    )
    // a writer like any other: through the write path's end (rollups, change notice)
    await measurementsWritten(client, {
      tables: ['water_15m'],
      fromMs: Date.parse(TEN_YEARS.from),
      toMs: Date.parse(TEN_YEARS.to) + 900_000,
    })
  })
}
