/**
 * `pnpm cluster up` / `pnpm cluster down`: the services past one machine, on this one's loopback
 * (docs/SCALING.md). Three RabbitMQ nodes in a cluster (the dataloggers publish MQTT 3.1.1 to any
 * of them; a quorum queue holds the packs), a PostgreSQL primary and a streaming standby made by
 * pg_basebackup, two ingest instances competing for the queue, two data API instances reading
 * from the standby, one OAuth server whose tokens they accept. Every process outlives this command; their PIDs, URLs, a
 * read key and the gateway's MQTT credential are written to `<DATA_DIR>/cluster.json`, and `down`
 * stops what that file names. State stays under `<DATA_DIR>/cluster/` (a second `up` reuses it).
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createApiKey, type EnergyDatabase, seedEstate } from '@campus/energy-data/live'
import { energyService } from '@campus/energy-data/service'
import { ingestService } from '@campus/ingest/service'
import { oauthService } from '@campus/oauth-server/service'
import {
  createDatabase,
  createDatabaseIfMissing,
  migrate,
  programAsTyped,
  readMigrations,
  runMain,
  type ServiceDescriptor,
} from '@campus/shared'
import { alive, PostgresPair, RabbitCluster } from '@campus/shared/cluster'
import { wireIdentity } from './identity.ts'

const USAGE = `usage: ${programAsTyped('pnpm cluster')} up | down [--purge]

up     starts, on loopback: 3 RabbitMQ nodes (MQTT for the dataloggers, a quorum queue), a
       PostgreSQL primary and its streaming standby, 2 ingest instances, 2 data API instances
       reading from the standby, 1 OAuth server; writes DATA_DIR/cluster.json and prints how to try it
down   stops every process cluster.json names (--purge: and deletes DATA_DIR/cluster/)

Environment: DATA_DIR (.data), CLUSTER_BASE_PORT (29100: the cluster uses the 80 ports from it),
MQTT_TOPIC_ROOT (campus).
`

export interface ClusterFile {
  brokers: Array<{ role: 'broker'; name: string; mqtt: string; amqp: string; pid: number }>
  postgres: {
    primary: { role: 'primary'; url: string; pid: number }
    standby: { role: 'standby'; url: string; pid: number }
  }
  ingest: Array<{ role: 'ingest'; url: string; pid: number }>
  energy: Array<{ role: 'energy'; url: string; pid: number }>
  oauth: { role: 'oauth'; url: string; pid: number }
  /** `read`: every endpoint of the data API; `gateway`: `POST /ingest/senml` of the ingest instances. */
  keys: { read: string; gateway: string }
  gateway: { username: string; password: string }
  topicRoot: string
  queue: string
}

const dataDir = resolve(process.env.DATA_DIR ?? '.data')
const clusterDir = join(dataDir, 'cluster')
const clusterFile = join(dataDir, 'cluster.json')
const basePort = Number(process.env.CLUSTER_BASE_PORT ?? 29_100)
const topicRoot = process.env.MQTT_TOPIC_ROOT ?? 'campus'
const QUEUE = 'ingest'

/** Ports from the base: brokers +0..+22 (AMQP, MQTT, distribution), PostgreSQL +30/+31, ingest +40.., data API +50.., OAuth +60. */
const PORTS = {
  primary: basePort + 30,
  standby: basePort + 31,
  ingest: (i: number) => basePort + 40 + i,
  energy: (i: number) => basePort + 50 + i,
  oauth: basePort + 60,
}

const say = (line: string) => process.stdout.write(`[cluster] ${line}\n`)

/** The secrets of the cluster, made once and kept beside its state (readable by its owner only). */
function secrets(): { ingest: string; gateway: string } {
  const file = join(clusterDir, 'secrets.json')
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as { ingest: string; gateway: string }
  const made = { ingest: randomBytes(18).toString('base64url'), gateway: randomBytes(18).toString('base64url') }
  writeFileSync(file, JSON.stringify(made), { mode: 0o600 })
  return made
}

/** A service as a process of its own that outlives this command, its output in a log file. */
function spawnDetached(descriptor: ServiceDescriptor, name: string, env: Record<string, string>): number {
  const log = openSync(join(clusterDir, 'logs', `${name}.log`), 'a')
  const child = spawn(
    process.execPath,
    [
      ...descriptor.nodeOptions,
      '--experimental-strip-types',
      '--disable-warning=ExperimentalWarning',
      descriptor.serverEntry,
    ],
    { env: { ...process.env, HOST: '127.0.0.1', ...env }, stdio: ['ignore', log, log], detached: true },
  )
  child.unref()
  return child.pid as number
}

async function ready(url: string, name: string, pid: number): Promise<void> {
  const deadline = Date.now() + 90_000
  for (;;) {
    if (!alive(pid)) throw new Error(`${name} exited: see ${join(clusterDir, 'logs', `${name}.log`)}`)
    const ok = await fetch(`${url}/health/ready`)
      .then((r) => r.status === 200)
      .catch(() => false)
    if (ok) return
    if (Date.now() > deadline)
      throw new Error(`${name} not ready in 90 s: see ${join(clusterDir, 'logs', `${name}.log`)}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

const withDatabase = (url: string, name: string) => {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

async function up(): Promise<void> {
  if (existsSync(clusterFile)) {
    const running = JSON.parse(readFileSync(clusterFile, 'utf8')) as ClusterFile
    if (alive(running.postgres.primary.pid)) {
      say(`already running (${clusterFile}); pnpm cluster down stops it`)
      process.stdout.write(tryIt(running))
      return
    }
  }
  mkdirSync(join(clusterDir, 'logs'), { recursive: true })
  // the PostgreSQL servers run as the postgres user under root: it must reach their folder
  chmodSync(clusterDir, 0o755)
  const secret = secrets()
  const rabbit = new RabbitCluster({
    dir: join(clusterDir, 'rabbitmq'),
    nodes: 3,
    basePort,
    prefix: `campus${basePort}n`,
    users: [
      { name: 'ingest', password: secret.ingest, configure: '.*', write: '.*', read: '.*', tags: ['administrator'] },
      // a gateway publishes for every datalogger of the estate, and nothing else
      {
        name: 'gateway',
        password: secret.gateway,
        configure: '^$',
        write: '^amq\\.topic$',
        read: '^$',
        // the MQTT plugin reads a topic's '/' as '.' (and a '.' as '/')
        topicWrite: `^${topicRoot.replaceAll('.', '/')}\\.[^.]+\\.senml$`,
      },
    ],
  })
  const postgres = new PostgresPair(join(clusterDir, 'postgres'), { primary: PORTS.primary, standby: PORTS.standby })
  say('starting 3 RabbitMQ nodes and a PostgreSQL primary with its standby (a first start takes a minute)')
  const [nodes] = await Promise.all([rabbit.start(true), postgres.start({ standby: true, detached: true })])
  say(`brokers: ${nodes.map((n) => n.mqtt).join(' ')}`)

  // databases on the primary (the standby replays them), migrated; the estate and the keys
  const energyUrl = withDatabase(postgres.url('primary'), 'energy')
  const oauthUrl = withDatabase(postgres.url('primary'), 'oauth')
  const energyReadUrl = withDatabase(postgres.url('standby'), 'energy')
  for (const [descriptor, url] of [
    [energyService, energyUrl],
    [oauthService, oauthUrl],
  ] as const) {
    await createDatabaseIfMissing(url)
    const database = createDatabase(url)
    try {
      await migrate(database.db, readMigrations(descriptor.migrationsDir))
    } finally {
      await database.close()
    }
  }
  const energy = createDatabase<EnergyDatabase>(energyUrl)
  let readKey: string
  let gatewayKey: string
  try {
    const seeded = await energy.pool.query('select 1 from meters where id = 860')
    if (seeded.rowCount === 0) {
      // the estate's metadata with one quarter hour long past: live samples of today are all taken
      const from = Date.parse('2024-01-01T00:00:00Z')
      await seedEstate(energy.pool, { fromMs: from, toMs: from + 15 * 60_000, seed: 1 })
    }
    readKey = (await createApiKey(energy.db, { name: `cluster-read-${Date.now()}`, endpoints: ['*'] })).key
    gatewayKey = (await createApiKey(energy.db, { name: `cluster-gateway-${Date.now()}`, endpoints: ['/ingest/*'] }))
      .key
  } finally {
    await energy.close()
  }

  // the data API instances accept the OAuth server's tokens (introspection) and sign people in there
  const identity = await wireIdentity(
    { HOST: '127.0.0.1', DATA_DIR: clusterDir, [oauthService.portEnv]: PORTS.oauth },
    oauthUrl,
    (line) => process.stderr.write(`${line}\n`),
    [0, 1].map((i) => `http://127.0.0.1:${PORTS.energy(i)}`),
  )

  const amqpUrls = (first: number) =>
    [0, 1, 2].map((k) => `amqp://ingest:${secret.ingest}@127.0.0.1:${rabbit.amqpPort((first + k) % 3)}`).join(',')
  const common = { MIGRATE_ON_START: 'false', LOG_LEVEL: 'info', MQTT_TOPIC_ROOT: topicRoot }
  const launched: Array<{ kind: 'ingest' | 'energy' | 'oauth'; url: string; pid: number; name: string }> = []
  for (let i = 0; i < 2; i++) {
    const port = PORTS.ingest(i)
    const pid = spawnDetached(ingestService, `ingest${i + 1}`, {
      ...common,
      INGEST_PORT: String(port),
      ENERGY_DATABASE_URL: energyUrl,
      INGEST_QUEUE_URL: amqpUrls(i),
      INGEST_QUEUE_NAME: QUEUE,
    })
    launched.push({ kind: 'ingest', url: `http://127.0.0.1:${port}`, pid, name: `ingest${i + 1}` })
  }
  for (let i = 0; i < 2; i++) {
    const port = PORTS.energy(i)
    const pid = spawnDetached(energyService, `energy${i + 1}`, {
      ...common,
      ENERGY_PORT: String(port),
      ENERGY_DATABASE_URL: energyUrl,
      ENERGY_READ_DATABASE_URL: energyReadUrl,
      ...identity,
    })
    launched.push({ kind: 'energy', url: `http://127.0.0.1:${port}`, pid, name: `energy${i + 1}` })
  }
  {
    const pid = spawnDetached(oauthService, 'oauth', {
      ...common,
      OAUTH_PORT: String(PORTS.oauth),
      OAUTH_DATABASE_URL: oauthUrl,
    })
    launched.push({ kind: 'oauth', url: `http://127.0.0.1:${PORTS.oauth}`, pid, name: 'oauth' })
  }
  const file: ClusterFile = {
    brokers: nodes.map((n) => ({ role: 'broker', name: n.name, mqtt: n.mqtt, amqp: n.amqp, pid: n.pid })),
    postgres: {
      primary: { role: 'primary', url: energyUrl, pid: postgres.pid('primary') ?? 0 },
      standby: { role: 'standby', url: energyReadUrl, pid: postgres.pid('standby') ?? 0 },
    },
    ingest: launched.filter((l) => l.kind === 'ingest').map((l) => ({ role: 'ingest', url: l.url, pid: l.pid })),
    energy: launched.filter((l) => l.kind === 'energy').map((l) => ({ role: 'energy', url: l.url, pid: l.pid })),
    oauth: launched
      .filter((l) => l.kind === 'oauth')
      .map((l) => ({ role: 'oauth' as const, url: l.url, pid: l.pid }))[0] as ClusterFile['oauth'],
    keys: { read: readKey, gateway: gatewayKey },
    gateway: { username: 'gateway', password: secret.gateway },
    topicRoot,
    queue: QUEUE,
  }
  // written before the waits: a `down` after a failed start still finds every process
  writeFileSync(clusterFile, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 })
  await Promise.all(launched.map((l) => ready(l.url, l.name, l.pid)))
  // the dataloggers may come at once: every node takes the gateway's MQTT connection
  await rabbit.awaitMqtt({ name: 'gateway', password: secret.gateway })
  process.stdout.write(tryIt(file))
}

function tryIt(file: ClusterFile): string {
  const broker = new URL(file.brokers[0]?.mqtt ?? 'mqtt://127.0.0.1')
  const now = Math.floor(Date.now() / 1000)
  const today = new Date().toISOString().slice(0, 10)
  const pack = JSON.stringify([{ bn: 'urn:campus:meter:', bt: now, n: '910', u: 'W', v: 41700 }])
  return `
Try it (everything is in ${clusterFile}):
  brokers (MQTT 3.1.1, QoS 1): ${file.brokers.map((b) => b.mqtt).join(' ')}
  gateway credential:          ${file.gateway.username} / ${file.gateway.password}
  mosquitto_pub -V mqttv311 -q 1 -h ${broker.hostname} -p ${broker.port} -u ${file.gateway.username} -P '${file.gateway.password}' \\
    -t ${file.topicRoot}/DL-CF-01/senml -m '${pack}'
  curl -H 'x-api-key: ${file.keys.read}' '${file.energy[0]?.url}/data/meters?ids=910&start_datetime=${today}'
  data API (reads from the standby): ${file.energy.map((e) => e.url).join(' ')}
  ingest (competing for the queue):  ${file.ingest.map((e) => e.url).join(' ')}
  curl -H 'x-api-key: ${file.keys.gateway}' -H 'content-type: application/senml+json' \\
    --data '${pack}' '${file.ingest[0]?.url}/ingest/senml'
  OAuth server:                      ${file.oauth.url} (its read_energy tokens work on both data APIs)
  pnpm cluster down stops it all.
`
}

async function stopPid(pid: number, signal: NodeJS.Signals, withinMs: number): Promise<void> {
  if (!pid || !alive(pid)) return
  process.kill(pid, signal)
  const deadline = Date.now() + withinMs
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  if (alive(pid)) process.kill(pid, 'SIGKILL')
}

async function down(purge: boolean): Promise<void> {
  if (existsSync(clusterFile)) {
    const file = JSON.parse(readFileSync(clusterFile, 'utf8')) as ClusterFile
    // the services first (the ingest acknowledges what it committed), then the brokers, then the databases
    await Promise.all([...file.ingest, ...file.energy, file.oauth].map((s) => stopPid(s.pid, 'SIGTERM', 20_000)))
    // an Erlang VM stops in order on SIGTERM
    await Promise.all(file.brokers.map((b) => stopPid(b.pid, 'SIGTERM', 30_000)))
    await stopPid(file.postgres.standby.pid, 'SIGINT', 30_000)
    await stopPid(file.postgres.primary.pid, 'SIGINT', 30_000)
    rmSync(clusterFile, { force: true })
    say('stopped')
  } else {
    say(`nothing to stop (${clusterFile} is absent)`)
  }
  if (purge) {
    rmSync(clusterDir, { recursive: true, force: true })
    say(`deleted ${clusterDir}`)
  }
}

runMain(async () => {
  const [command, ...rest] = process.argv.slice(2)
  if (command === 'up') return up()
  if (command === 'down') return down(rest.includes('--purge'))
  process.stderr.write(USAGE)
  process.exit(command === '--help' || command === '-h' ? 0 : 2)
})
