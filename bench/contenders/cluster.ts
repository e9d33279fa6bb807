/**
 * The cluster (docs/SCALING.md): three RabbitMQ nodes of the machine's RabbitMQ, on loopback ports
 * of their own, the dataloggers publishing MQTT 3.1.1 at QoS 1 to them in turn (a PUBACK once the
 * quorum queue holds the pack on a majority), two ingest instances competing for the queue, each
 * acknowledging after its commit, on a fresh database holding the estate's metadata (the bench's
 * PostgreSQL: the primary; no standby, the bench reads nothing). Counted in `meter_samples`; the
 * CPU counted is the first instance's.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EnergyDatabase } from '../../packages/energy-data/src/db/schema.ts'
import { seedEstate } from '../../packages/energy-data/src/seed/seed.ts'
import { energyService } from '../../packages/energy-data/src/service.ts'
import { ingestService } from '../../packages/ingest/src/service.ts'
import { RabbitCluster, rabbitmqPrograms } from '../../packages/shared/src/cluster/index.ts'
import { launchService } from '../../packages/shared/src/index.ts'
import { BENCH_SERVER_URL, benchDatabase } from '../support.ts'
import type { Contender } from './contender.ts'

/** Whether the machine has RabbitMQ (the cluster contender runs only then). */
export const clusterAvailable = (): boolean => rabbitmqPrograms() !== undefined

export async function startCluster(run: string): Promise<Contender> {
  const database = await benchDatabase<EnergyDatabase>('clusterbench', energyService.migrationsDir, BENCH_SERVER_URL)
  const dir = mkdtempSync(join(tmpdir(), 'bench-cluster-'))
  const topicRoot = `bench-${run}-cluster`
  const gateway = { username: 'gateway', password: `bench-${run}-gateway` }
  const ingestPassword = `bench-${run}-ingest`
  const rabbit = new RabbitCluster({
    dir,
    nodes: 3,
    basePort: Number(process.env.BENCH_CLUSTER_BASE_PORT ?? 28_200),
    prefix: `bench${run}n`,
    users: [
      { name: 'ingest', password: ingestPassword, configure: '.*', write: '.*', read: '.*', tags: ['administrator'] },
      {
        name: gateway.username,
        password: gateway.password,
        configure: '^$',
        write: '^amq\\.topic$',
        read: '^$',
        topicWrite: `^${topicRoot}\\.[^.]+\\.senml$`,
      },
    ],
  })
  const stops: Array<() => Promise<unknown>> = [
    () => database.close(),
    async () => rmSync(dir, { recursive: true, force: true }),
    () => rabbit.stop(),
  ]
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s()
  }
  try {
    const nodes = await rabbit.start()
    await rabbit.awaitMqtt({ name: gateway.username, password: gateway.password })
    const from = Date.parse('2024-01-01T00:00:00Z')
    await seedEstate(database.pool, { fromMs: from, toMs: from + 900_000, seed: 1 })
    const instances = []
    for (let i = 0; i < 2; i++) {
      const urls = [0, 1, 2].map((k) => `amqp://ingest:${ingestPassword}@127.0.0.1:${rabbit.amqpPort((i + k) % 3)}`)
      const ingest = await launchService(ingestService, {
        env: {
          ENERGY_DATABASE_URL: database.url,
          INGEST_QUEUE_URL: urls.join(','),
          INGEST_QUEUE_NAME: `bench${run}`,
          MQTT_TOPIC_ROOT: topicRoot,
          // the bench writes instants of 2025, kept apart from now: a year and more back is taken
          INGEST_MAX_AGE_DAYS: '3650',
          LOG_LEVEL: 'warn',
          MIGRATE_ON_START: 'false',
        },
        maxOutput: 0,
        onLine: (text) => process.stderr.write(`cluster ingest ${i + 1}: ${text}\n`),
      })
      stops.push(() => ingest.stop())
      instances.push(ingest)
    }
    return {
      name: 'cluster',
      databaseUrl: database.url,
      table: 'meter_samples',
      pid: instances[0]?.child.pid,
      topicRoot,
      broker: { mqtt: nodes.map((n) => n.mqtt), ...gateway },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}
