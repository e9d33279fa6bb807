/**
 * Brokers authenticate: the embedded broker of `npm start` and a Mosquitto configured by
 * `pnpm energy datalogger:credentials --mosquitto` take only the credentials of the energy
 * database, and each user does only what its role allows.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { type EnergyDatabase, energyService, findBrokerCredential } from '@campus/energy-data/live'
import { freePort, runServiceCommand } from '@campus/shared'
import { answersAt, serverProgram, stopServerProgram, type TestDatabase } from '@campus/shared/testing'
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmbeddedBroker } from '../src/broker.ts'
import { senmlTopic, senmlTopics } from '../src/service.ts'
import { ingestDatabase } from './support.ts'

let database: TestDatabase<EnergyDatabase>
const logins = new Map<string, { username: string; password: string }>()

const energy = async (args: string[], env: Record<string, string> = {}) => {
  const run = await runServiceCommand(energyService, args, {
    env: { ENERGY_DATABASE_URL: database.url, MIGRATE_ON_START: 'false', ...env },
  })
  if (run.code !== 0) throw new Error(`pnpm energy ${args.join(' ')}: ${run.stderr}`)
  return JSON.parse(run.stdout) as { username: string; password: string; client_id: string }
}

beforeAll(async () => {
  ;({ database } = await ingestDatabase())
  // through the command line, as an operator issues them
  for (const id of ['DL-CF-01', 'DL-AULEP-00']) logins.set(id, await energy(['datalogger:credentials', id]))
  logins.set('ingest-a', await energy(['datalogger:credentials', '--ingest', 'ingest-a']))
}, 60_000)
afterAll(async () => database?.close())

const DYNSEC_PLUGIN = [
  '/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so',
  '/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so',
  '/usr/lib/mosquitto_dynamic_security.so',
].find((path) => existsSync(path))
const MOSQUITTO = serverProgram('mosquitto')
const mosquittoInstalled = MOSQUITTO !== undefined && DYNSEC_PLUGIN !== undefined
if (!mosquittoInstalled)
  process.stdout.write(
    `[test] Mosquitto broker tests skipped: ${MOSQUITTO ? 'its dynamic-security plugin is missing' : 'no mosquitto program on PATH or in /usr/sbin'} (apt-get install mosquitto)\n`,
  )

/** A Mosquitto of its own on a private port, configured from the database as the README says. */
async function startMosquitto(): Promise<{ url: string; close: () => Promise<void>; version: 5 }> {
  const dir = mkdtempSync(join(tmpdir(), 'broker-auth-'))
  await energy(['datalogger:credentials', '--mosquitto', join(dir, 'dynamic-security.json')])
  const port = await freePort()
  writeFileSync(
    join(dir, 'mosquitto.conf'),
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous false',
      `plugin ${DYNSEC_PLUGIN}`,
      `plugin_opt_config_file ${join(dir, 'dynamic-security.json')}`,
      // run as root (CI), Mosquitto would change to its own user, who cannot read the file
      `user ${userInfo().username}`,
      '',
    ].join('\n'),
  )
  const child: ChildProcess = spawn(MOSQUITTO as string, ['-c', join(dir, 'mosquitto.conf')], { stdio: 'ignore' })
  const url = `mqtt://127.0.0.1:${port}`
  for (let i = 0; i < 100 && !(await answersAt(url)); i++) await new Promise((r) => setTimeout(r, 100))
  return {
    url,
    version: 5,
    close: async () => {
      await stopServerProgram(child)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function startAedes(): Promise<{ url: string; close: () => Promise<void>; version: 4 }> {
  const broker = await startEmbeddedBroker('127.0.0.1', 0, {
    find: (username) => findBrokerCredential(database.db, username),
    topicRoot: 'campus',
  })
  return { ...broker, version: 4 }
}

const brokers: Array<[string, () => Promise<{ url: string; close: () => Promise<void>; version: 4 | 5 }>]> = [
  ['the embedded broker (aedes)', startAedes],
]
if (mosquittoInstalled) brokers.push(['Mosquitto configured by datalogger:credentials --mosquitto', startMosquitto])

describe.each(brokers)('brokers authenticate: %s', (_name, start) => {
  let broker: Awaited<ReturnType<typeof start>>
  const clients: MqttClient[] = []
  beforeAll(async () => {
    broker = await start()
  }, 30_000)
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)))
    await broker?.close()
  })

  const connect = async (user: string | undefined, options: IClientOptions = {}) => {
    const login = user ? logins.get(user) : undefined
    const client = await mqtt.connectAsync(broker.url, {
      protocolVersion: broker.version,
      reconnectPeriod: 0,
      clean: true,
      clientId: user ?? 'anonymous',
      ...(login ? { username: login.username, password: login.password } : {}),
      ...options,
    })
    clients.push(client)
    return client
  }
  /** The ingest's subscription to the stream, collecting what it receives. */
  const ingest = async () => {
    const client = await connect('ingest-a')
    const received: Array<{ topic: string; payload: string }> = []
    client.on('message', (topic, payload) => received.push({ topic, payload: payload.toString() }))
    const filter = broker.version === 5 ? `$share/ingest/${senmlTopics()}` : senmlTopics()
    const granted = await client.subscribeAsync(filter, { qos: 1 })
    expect(granted[0]?.qos).toBe(1)
    return { client, received }
  }
  const arrived = async (received: Array<{ payload: string }>, payload: string) => {
    for (let i = 0; i < 200 && !received.some((m) => m.payload === payload); i++)
      await new Promise((r) => setTimeout(r, 25))
    expect(received.map((m) => m.payload)).toContain(payload)
  }

  it('refuses an anonymous client, an unknown user and a wrong password', async () => {
    await expect(connect(undefined)).rejects.toThrow()
    await expect(connect(undefined, { username: 'nobody', password: 'x' })).rejects.toThrow()
    await expect(
      connect('DL-CF-01', { username: 'DL-CF-01', password: `${logins.get('DL-CF-01')!.password}x` }),
    ).rejects.toThrow()
  })

  it('drops what a datalogger publishes to another datalogger\u2019s topic, and takes its own', async () => {
    const { client, received } = await ingest()
    const intruder = await connect('DL-CF-01')
    // Mosquitto answers the PUBLISH "not authorized"; aedes (MQTT 3.1.1) closes the connection
    const closed = new Promise<void>((resolve) => intruder.once('close', () => resolve()))
    await Promise.race([
      intruder.publishAsync(senmlTopic('DL-AULEP-00'), 'forged', { qos: 1 }).catch(() => undefined),
      closed,
    ])
    intruder.end(true)
    const honest = await connect('DL-CF-01')
    await honest.publishAsync(senmlTopic('DL-CF-01'), 'own', { qos: 1 })
    await arrived(received, 'own')
    expect(received).toEqual([{ topic: senmlTopic('DL-CF-01'), payload: 'own' }])
    await honest.endAsync()
    await client.endAsync()
  })

  it('refuses a datalogger\u2019s subscription to the stream, shared or not: no message is lost to it', async () => {
    const { client, received } = await ingest()
    const thief = await connect('DL-AULEP-00')
    const filters = [senmlTopics(), senmlTopic('DL-CF-01'), '#']
    if (broker.version === 5) filters.push(`$share/ingest/${senmlTopics()}`)
    for (const filter of filters) {
      // mqtt.js rejects a refused subscription, with the SUBACK it got
      const refusal = (await thief.subscribeAsync(filter, { qos: 1 }).then(
        () => undefined,
        (error: { packet?: { granted?: number[] } }) => error.packet?.granted?.[0],
      )) as number | undefined
      expect(refusal, filter).toBeGreaterThanOrEqual(0x80)
    }
    const stolen: string[] = []
    thief.on('message', (_topic, payload) => stolen.push(payload.toString()))
    const publisher = await connect('DL-CF-01')
    for (let i = 0; i < 10; i++) await publisher.publishAsync(senmlTopic('DL-CF-01'), `m${i}`, { qos: 1 })
    await arrived(received, 'm9')
    expect(received.map((m) => m.payload)).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`))
    expect(stolen).toEqual([])
    await publisher.endAsync()
    await client.endAsync()
  })

  it('refuses a client id that is not the username: the ingest\u2019s session cannot be taken over', async () => {
    const { client, received } = await ingest()
    await expect(connect('DL-CF-01', { clientId: 'ingest-a' })).rejects.toThrow()
    // the ingest's own credential under another id is refused too: its id is its username
    await expect(connect('ingest-a', { clientId: 'ingest-b' })).rejects.toThrow()
    const publisher = await connect('DL-CF-01')
    await publisher.publishAsync(senmlTopic('DL-CF-01'), 'after', { qos: 1 })
    await arrived(received, 'after')
    expect(client.connected).toBe(true)
    await publisher.endAsync()
    await client.endAsync()
  })
})
