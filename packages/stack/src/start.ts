/**
 * `pnpm start`: the services on the embedded database, in one terminal, live.
 *
 * This process owns the embedded PGlite directories (`.data/oauth`, `.data/energy`), serves them
 * on loopback ports and migrates them; then it runs each service as its own process pointed at
 * its database (the data API wired to accept the OAuth server's tokens, `identity.ts`), prefixes
 * their output, prepares demo data once, and stops everything on Ctrl-C. The ingest service takes
 * live samples from an embedded MQTT broker (or MQTT_URL's), fed by simulated dataloggers.
 * A service whose *_DATABASE_URL is set uses that server instead.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import {
  type EnergyDatabase,
  findBrokerCredential,
  generateBrokerPassword,
  issueBrokerCredential,
  registerReadings,
  TOPIC_ROOT,
} from '@campus/energy-data/live'
import { startEmbeddedBroker } from '@campus/ingest/broker'
import { ingestService } from '@campus/ingest/service'
import { startSimulatedDataloggers } from '@campus/ingest/simulator'
import { oauthService } from '@campus/oauth-server/service'
import {
  announceStack,
  launchService,
  liveProcess,
  programAsTyped,
  runMain,
  type ServiceDatabase,
  type ServiceDescriptor,
  type ServiceProcess,
  serviceDataDir,
  serviceEndpoints,
  spawnService,
} from '@campus/shared'
import type { Kysely } from 'kysely'
import { openAndMigrate } from './databases.ts'
import { identityConsumer, wireIdentity } from './identity.ts'
import { portProblems } from './ports.ts'
import { prettyLine } from './pretty.ts'
import { loadStackConfig, type StackConfig, services } from './services.ts'
import { type DemoDetails, readDemoDetails, serviceUrls, tryItBlock, writeDemoDetails } from './try-it.ts'

const USAGE = `usage: ${programAsTyped('pnpm start')} [--watch]     (pnpm dev, npm run dev: with --watch)

Runs the services on their databases (the embedded one in DATA_DIR unless OAUTH_DATABASE_URL /
ENERGY_DATABASE_URL is set) and the ingest service on an embedded MQTT broker (unless MQTT_URL is
set) with simulated dataloggers, prepares demo data on the first start, prints how to try them,
and stops everything on Ctrl-C. pnpm demo prints the demo details again.

  --watch   restart a service when its files change
  --help    this text

Environment: HOST, OAUTH_PORT, ENERGY_PORT, INGEST_PORT, DATA_DIR, OAUTH_DATABASE_URL,
ENERGY_DATABASE_URL, MQTT_URL, MQTT_PORT, MQTT_TOPIC_ROOT, SIMULATE_DATALOGGERS, DEMO_DAYS
(README.md, "Configuration").
`

function options(): { watch: boolean } {
  try {
    const { values } = parseArgs({ options: { watch: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } })
    if (values.help) {
      process.stdout.write(USAGE)
      process.exit(0)
    }
    return { watch: values.watch === true }
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n${USAGE}`)
    process.exit(2)
  }
}

/** Each line of a child, shortened and prefixed with its service's name. */
function prefixed(name: string) {
  return (line: string, stream: 'stdout' | 'stderr') =>
    (stream === 'stdout' ? process.stdout : process.stderr).write(`${tag(name)}${prettyLine(line)}\n`)
}

/** One line naming a database while it opens: a first embedded start takes seconds. */
function opening(descriptor: ServiceDescriptor, config: StackConfig): string {
  if (serviceEndpoints(descriptor, config).databaseUrl) return `${descriptor.name}: connecting to its PostgreSQL server`
  const dir = serviceDataDir(config.DATA_DIR, descriptor.name)
  return existsSync(dir)
    ? `${descriptor.name}: opening the embedded database in ${dir}`
    : `${descriptor.name}: creating the embedded database in ${dir} (first start: initdb and migrations, some seconds)`
}

/** Runs a service's command line; its JSON result, or undefined (its errors go to the console). */
async function command(
  descriptor: ServiceDescriptor,
  args: string[],
  env: Record<string, string | undefined>,
  children: Set<ServiceProcess>,
): Promise<Record<string, unknown> | undefined> {
  const stdout: string[] = []
  const run = spawnService(descriptor, {
    entry: 'cli',
    args,
    env,
    onLine: (line, stream) =>
      stream === 'stdout' ? stdout.push(line) : process.stderr.write(`${tag(descriptor.name)}${line}\n`),
    maxOutput: 0,
  })
  children.add(run)
  const code = await run.exited
  children.delete(run)
  if (code !== 0) return undefined
  return JSON.parse(stdout.join('\n')) as Record<string, unknown>
}

const tag = (name: string) => `[${name}]`.padEnd(9)

/** The energy demo commands' --days: what a fresh database is seeded with (a seeded one keeps its own). */
const demoDays = (config: StackConfig) => ['--days', String(config.DEMO_DAYS)]

/**
 * The demo, recorded for `pnpm demo`: the user and application the OAuth server's `demo` makes on
 * an empty database (a database emptied since gets new ones), and a data API key, made again
 * when the recorded one no longer works.
 */
async function prepareDemo(
  config: StackConfig,
  run: (name: string, args: string[]) => Promise<Record<string, unknown> | undefined>,
): Promise<DemoDetails> {
  const details = readDemoDetails(config)
  const oauth = (await run('oauth', ['demo'])) as
    | { user?: { username: string; password: string }; application?: { client_id: string; redirect_uri: string } }
    | undefined
  if (oauth?.user && oauth.application) {
    details.oauth = {
      ...oauth.user,
      client_id: oauth.application.client_id,
      redirect_uri: oauth.application.redirect_uri,
    }
  }
  const works = async (key: string) =>
    (await fetch(`${serviceUrls(config).energy}/metadata/meters/`, { headers: { 'x-api-key': key } })).status === 200
  if (!details.energy?.gatewayKey || !(await works(details.energy.key))) {
    const result = (await run('energy', ['demo:key', ...demoDays(config)])) as
      | { key?: string; gateway_key?: string }
      | undefined
    if (result?.key)
      details.energy = { key: result.key, ...(result.gateway_key ? { gatewayKey: result.gateway_key } : {}) }
    else delete details.energy
  }
  if (details.oauth || details.energy) writeDemoDetails(config, details)
  return details
}

/** Another stack's process, alive, named by `pidFile` (a pid reused since by another program is none). */
function otherStack(pidFile: string): number | undefined {
  let pid: number
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim())
  } catch {
    return undefined // no file
  }
  return pid !== process.pid && liveProcess(pid, 'start.ts') ? pid : undefined
}

runMain(async () => {
  const { watch } = options()
  const config = loadStackConfig()
  // Scripts and supervisors find the stack here (stop it with SIGINT or SIGTERM to this pid or its group).
  const pidFile = resolve(config.DATA_DIR, 'stack.pid')
  // one stack per DATA_DIR: a second would take its embedded databases and its announcement
  const running = otherStack(pidFile)
  if (running) {
    process.stderr.write(
      `[start]  a stack already runs on DATA_DIR ${resolve(config.DATA_DIR)} (process ${running}): stop it first (Ctrl-C where it runs, or kill -INT ${running}), or set DATA_DIR to another folder\n`,
    )
    process.exit(1)
  }
  const taken = await portProblems(config)
  if (taken.length) {
    for (const line of taken) process.stderr.write(`[start]  ${line}\n`)
    process.exit(1)
  }
  const databases: Array<ServiceDatabase<unknown>> = []
  const children = new Set<ServiceProcess>()
  let stopping = false

  const live: Array<() => Promise<void>> = []
  let closeBroker = async (): Promise<void> => undefined
  const stopAll = async (code: number) => {
    if (stopping) return
    stopping = true
    // the simulated dataloggers first, then the ingest service drains what it holds, then the broker
    for (const stop of live.splice(0).reverse()) await stop().catch(() => undefined)
    await Promise.all([...children].map((child) => child.stop('SIGTERM', 15_000)))
    await closeBroker().catch(() => undefined)
    for (const database of databases) await database.close()
    process.exit(code)
  }
  mkdirSync(dirname(pidFile), { recursive: true })
  writeFileSync(pidFile, String(process.pid))
  process.on('exit', () => rmSync(pidFile, { force: true }))
  process.on('SIGINT', () => void stopAll(0))
  process.on('SIGTERM', () => void stopAll(0))

  // both databases open and migrate at once: a cold embedded start costs seconds each
  const urls = new Map<string, string>()
  let energyDatabase: Kysely<EnergyDatabase> | undefined
  const started = Date.now()
  for (const descriptor of services) process.stdout.write(`[db]     ${opening(descriptor, config)}\n`)
  const ticker = setInterval(
    () =>
      process.stdout.write(`[db]     still preparing the databases (${Math.round((Date.now() - started) / 1000)} s)\n`),
    5000,
  )
  try {
    await Promise.all(
      services.map(async (descriptor) => {
        const { database, result } = await openAndMigrate(descriptor, config)
        databases.push(database)
        if (descriptor.name === 'energy') energyDatabase = database.db as Kysely<EnergyDatabase>
        const note =
          (result.created ? 'created, ' : '') +
          (result.applied.length ? `applied ${result.applied.length} migration(s)` : 'schema up to date')
        const seconds = ((Date.now() - started) / 1000).toFixed(1)
        process.stdout.write(`[db]     ${descriptor.name}: ${database.description}, ${note} (${seconds} s)\n`)
        urls.set(descriptor.name, database.url)
      }),
    )
  } finally {
    clearInterval(ticker)
  }

  // live measurements: the broker (embedded unless MQTT_URL names one), then the ingest service
  // the broker takes only the credentials of the energy database (broker_credentials): the ingest
  // service's is issued anew at each start, a datalogger's by `pnpm energy datalogger:credentials`
  const brokerUsers = energyDatabase!
  let mqttUrl = config.MQTT_URL
  let ingestLogin: Record<string, string> = {}
  if (!mqttUrl) {
    const ingestUser = { username: 'ingest', password: generateBrokerPassword() }
    await issueBrokerCredential(brokerUsers, { ...ingestUser, role: 'ingest' })
    ingestLogin = { MQTT_USERNAME: ingestUser.username, MQTT_PASSWORD: ingestUser.password, MQTT_CLIENT_ID: 'ingest' }
    const accounts = {
      find: (username: string) => findBrokerCredential(brokerUsers, username),
      topicRoot: config.MQTT_TOPIC_ROOT ?? TOPIC_ROOT,
    }
    const broker = await startEmbeddedBroker(config.HOST, Number(config.MQTT_PORT), accounts).catch(async (error) => {
      const taken = (error as { code?: string }).code === 'EADDRINUSE'
      process.stderr.write(
        taken
          ? `[mqtt]   port ${config.MQTT_PORT} is taken: set MQTT_PORT to a free one, or MQTT_URL to your broker\n`
          : `[mqtt]   the embedded broker could not start: ${(error as Error).message}\n`,
      )
      await stopAll(1)
      throw error
    })
    closeBroker = broker.close
    mqttUrl = broker.url
    process.stdout.write(`[mqtt]   embedded broker at ${mqttUrl} (MQTT_URL names another)\n`)
  }

  // the data API accepts the OAuth server's tokens: its client is registered before either starts
  const identity = await wireIdentity(config, urls.get(oauthService.name), prefixed(oauthService.name))
  const envOf = (name: string): Record<string, string | undefined> => ({
    [services.find((s) => s.name === name)!.databaseUrlEnv]: urls.get(name),
  })
  /**
   * One service, started again whenever it dies (after 1 s, doubling to 30 s, back to 1 s once it
   * has run a minute), with the reason in the log: the others go on meanwhile. Only its first
   * start failing stops the stack.
   */
  const supervise = async (
    name: string,
    launch: (onSpawn: (service: ServiceProcess) => void) => Promise<ServiceProcess>,
  ): Promise<void> => {
    let delayMs = 1000
    // a service is stopped with the others from its spawn on: Ctrl-C while it starts (again) leaves no orphan
    const track = (service: ServiceProcess) => {
      children.add(service)
      void service.exited.then(() => children.delete(service))
    }
    const run = async (): Promise<void> => {
      const started = Date.now()
      const service = await launch(track)
      void service.exited.then(async (code) => {
        if (stopping) return
        if (Date.now() - started > 60_000) delayMs = 1000
        const why =
          code === null ? `was killed (${service.child.signalCode ?? 'a signal'})` : `exited with code ${code}`
        process.stderr.write(`${tag(name)}${why}; starting it again in ${delayMs / 1000} s, the others go on\n`)
        const again = async (): Promise<void> => {
          await new Promise((resolve) => setTimeout(resolve, delayMs))
          delayMs = Math.min(delayMs * 2, 30_000)
          if (stopping) return
          await run().catch((error: Error) => {
            if (stopping) return
            process.stderr.write(`${tag(name)}could not start again: ${error.message}\n`)
            return again()
          })
        }
        await again()
      })
    }
    await run()
  }
  const launched = Promise.all(
    services.map((descriptor) =>
      supervise(descriptor.name, (onSpawn) =>
        launchService(descriptor, {
          onSpawn,
          port: serviceEndpoints(descriptor, config).port,
          host: config.HOST,
          env: {
            ...envOf(descriptor.name),
            ...(descriptor.name === identityConsumer ? identity : {}),
            MIGRATE_ON_START: 'false',
          },
          watch,
          onLine: prefixed(descriptor.name),
          maxOutput: 0,
        }),
      ),
    ),
  )
  const ingest = supervise(ingestService.name, (onSpawn) =>
    launchService(ingestService, {
      onSpawn,
      port: serviceEndpoints(ingestService, config).port,
      host: config.HOST,
      // the data API's resource-server client: tokens with write_energy may post measurements
      env: { ...envOf('energy'), ...identity, ...ingestLogin, MQTT_URL: mqttUrl, MIGRATE_ON_START: 'false' },
      watch,
      onLine: prefixed(ingestService.name),
      maxOutput: 0,
    }),
  )
  try {
    await launched
    await ingest
  } catch (error) {
    // a service stopped by Ctrl-C while it started says nothing more
    if (!stopping) process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    await stopAll(1)
  }
  if (stopping) return
  // command lines that are clients of the services (pnpm demo, pnpm energy login/export) find them here
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST
  const announced = {
    ...serviceUrls(config),
    ingest: `http://${host}:${serviceEndpoints(ingestService, config).port}`,
    mqtt: mqttUrl,
  }
  announceStack(config.DATA_DIR, announced)

  // The demo user, application and key, then the one block to copy from; the demo data is
  // seeded afterwards while the services already answer.
  const cliEnv = (descriptor: ServiceDescriptor) => ({
    ...envOf(descriptor.name),
    HOST: config.HOST,
    [descriptor.portEnv]: String(serviceEndpoints(descriptor, config).port),
    MIGRATE_ON_START: 'false',
  })
  const byName = (name: string) => services.find((s) => s.name === name)!
  const details = await prepareDemo(config, (name, args) => command(byName(name), args, cliEnv(byName(name)), children))
  if (stopping) return
  process.stdout.write(`\n${tryItBlock(config, details, announced)}\nPress Ctrl-C to stop.\n\n`)

  const energy = byName('energy')
  const seeded = await command(energy, ['demo', ...demoDays(config)], cliEnv(energy), children)
  if (stopping) return
  if (!seeded) process.stderr.write(`${tag('energy')}demo data could not be prepared\n`)
  else if (seeded.demo === 'prepared') process.stdout.write(`${tag('energy')}demo data ready\n`)
  if (config.SIMULATE_DATALOGGERS !== false && !stopping) {
    // the demo goes on live: simulated dataloggers continue the seed's model into real time
    const simulated = await startSimulatedDataloggers(mqttUrl, {
      topicRoot: config.MQTT_TOPIC_ROOT,
      log: (line) => process.stderr.write(`${tag('ingest')}${line}\n`),
      // each simulated datalogger gets a fresh credential of its own, as a real gateway would
      login: (id) => issueBrokerCredential(brokerUsers, { username: id, role: 'datalogger' }),
      // the water registers go on from the last readings stored: a restart is no meter reset
      registers: await registerReadings(energyDatabase!),
    })
    live.push(simulated.stop)
    process.stdout.write(
      `${tag('ingest')}live: simulated dataloggers publish SenML to ${mqttUrl} every 5 s (SIMULATE_DATALOGGERS=false stops them)\n`,
    )
  }
})
