/**
 * Ours: the ingest service as its own process (launchService), on a fresh database holding the
 * estate's metadata, its own topic root and share group; it counts in `meter_samples`. The data API
 * runs beside it, to read the samples back from `/data/meters`.
 */
import { once } from 'node:events'
import type { EnergyDatabase } from '../../packages/energy-data/src/db/schema.ts'
import { createApiKey } from '../../packages/energy-data/src/repositories/api-keys.ts'
import { seedEstate } from '../../packages/energy-data/src/seed/seed.ts'
import { energyService } from '../../packages/energy-data/src/service.ts'
import { ingestService } from '../../packages/ingest/src/service.ts'
import { launchService } from '../../packages/shared/src/index.ts'
import { energyNodeFlags, startEnergyService } from '../energy-support.ts'
import { BENCH_SERVER_URL, benchDatabase } from '../support.ts'
import { BENCH_APPLICATION_PREFIX, type Contender } from './contender.ts'

export interface Ours extends Contender {
  /** The data API on the same database: its address and a key reading everything. */
  readonly dataApi: { base: string; key: string }
}

/** `env`: settings of the ingest service beside the bench's own. */
export async function startOurs(mqttUrl: string, run: string, env: Record<string, string> = {}): Promise<Ours> {
  const database = await benchDatabase<EnergyDatabase>('ingestbench', energyService.migrationsDir, BENCH_SERVER_URL)
  const stops: Array<() => Promise<unknown>> = [() => database.close()]
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s()
  }
  try {
    const from = Date.parse('2024-01-01T00:00:00Z')
    await seedEstate(database.pool, { fromMs: from, toMs: from + 900_000, seed: 1 })
    const ingest = await launchService(ingestService, {
      env: {
        ENERGY_DATABASE_URL: database.url,
        MQTT_URL: mqttUrl,
        MQTT_CLIENT_ID: `b${run}ours`,
        MQTT_SHARE_GROUP: `b${run}ours`,
        MQTT_TOPIC_ROOT: `bench-${run}-ours`,
        // sessions the broker forgets soon after the bench
        MQTT_SESSION_SECONDS: '60',
        // the bench writes instants of 2025, kept apart from now: a year and more back is taken
        INGEST_MAX_AGE_DAYS: '3650',
        ...(process.env.BENCH_IN_FLIGHT ? { MQTT_IN_FLIGHT: process.env.BENCH_IN_FLIGHT } : {}),
        LOG_LEVEL: 'warn',
        MIGRATE_ON_START: 'false',
        ...env,
      },
      maxOutput: 0,
      onLine: (text) => process.stderr.write(`ingest: ${text}\n`),
    })
    stops.push(() => ingest.stop())
    // the data API beside it from the start, as in production: its first start builds the rollups'
    // days and months under the lock the writes take (after samples came, that holds the ingest up);
    // its connections named, so that they are not counted as the ingest's
    const readerUrl = new URL(database.url)
    readerUrl.searchParams.set('application_name', `${BENCH_APPLICATION_PREFIX}data-api`)
    const energy = await startEnergyService(readerUrl.toString(), energyNodeFlags(undefined), { ENERGY_CACHE_MB: '0' })
    stops.push(async () => {
      if (energy.child.exitCode !== null) return
      const gone = once(energy.child, 'exit')
      energy.child.kill('SIGTERM')
      await gone
    })
    const { key } = await createApiKey(database.db, { name: 'bench', endpoints: ['*'] })
    return {
      name: 'ours',
      databaseUrl: database.url,
      table: 'meter_samples',
      pid: ingest.child.pid,
      topicRoot: `bench-${run}-ours`,
      stop,
      dataApi: { base: energy.base, key },
    }
  } catch (error) {
    await stop()
    throw error
  }
}
