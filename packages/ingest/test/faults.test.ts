import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, launchService, type RunningService } from '@campus/shared'
import { needsService, serverProgram, startTcpProxy, stopServerProgram } from '@campus/shared/testing'
import mqtt from 'mqtt'
import { afterAll, describe, expect, it } from 'vitest'
import { ingestService, senmlTopic } from '../src/service.ts'
import { BASE, eventually, ingestDatabase, QUARTER, quarterStats, storedQuarters, testTopicRoot } from './support.ts'

/**
 * The faults a live ingest meets, on real processes: the service as a child process, the machine's
 * Mosquitto (kill -9 of the service), a Mosquitto of the test's own (restarted), a TCP proxy cut
 * (the database gone, the broker unreachable).
 */
const mosquittoUrl = process.env.TEST_MQTT_URL || 'mqtt://127.0.0.1:1883'
const onBroker = await needsService('ingest fault tests (Mosquitto)', 'TEST_MQTT_URL')

/** The mosquitto program, for a broker of the test's own. */
const MOSQUITTO = serverProgram('mosquitto')
if (!MOSQUITTO && !process.env.CI) {
  process.stdout.write(
    '[test] broker restart test skipped: no mosquitto program (apt-get install mosquitto); CI runs it\n',
  )
}

const { database } = await ingestDatabase()
afterAll(() => database.close())

const run = `${process.pid % 100_000}`
const root = testTopicRoot('faults')
const launch = (env: Record<string, string>) =>
  launchService(ingestService, {
    env: {
      ENERGY_DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      MIGRATE_ON_START: 'false',
      MQTT_TOPIC_ROOT: root,
      // long enough for a restart, short enough that the test's sessions do not pile up at the broker
      MQTT_SESSION_SECONDS: '300',
      ...env,
    },
    maxOutput: 200_000,
  })

/** `packs` SenML packs of `per` samples of one meter, from `t0` on, one every 10 s. */
function stream(meter: number, t0: number, packs: number, per: number) {
  const sent: Array<{ meter: number; t: number; value: number }> = []
  const payloads: string[] = []
  for (let p = 0; p < packs; p++) {
    const records = []
    for (let i = 0; i < per; i++) {
      const k = p * per + i
      const s = { meter, t: t0 + k * 10_000, value: 50 + ((k * 7919) % 1000) / 10 }
      sent.push(s)
      records.push({ n: `urn:campus:meter:${meter}`, t: s.t / 1000, v: s.value })
    }
    payloads.push(JSON.stringify(records))
  }
  return { sent, payloads }
}

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

const samplesOf = async (meter: number) =>
  Number((await database.pool.query('select count(*) as n from meter_samples where meter_id = $1', [meter])).rows[0].n)

async function expectExact(meter: number, sent: Array<{ meter: number; t: number; value: number }>) {
  expect(await samplesOf(meter)).toBe(sent.length)
  const stored = await storedQuarters(database, [meter])
  for (const [key, want] of quarterStats(sent)) {
    const row = stored.get(key)
    expect(row, key).toBeDefined()
    expect(row!.count_value, key).toBe(want.count)
    expect(row!.sum_value, key).toBeCloseTo(want.sum, 8)
  }
}

describe.runIf(onBroker)('ingest faults', () => {
  it('kill -9 mid-stream, then a restart: every sample present exactly once', async () => {
    const env = { MQTT_URL: mosquittoUrl, MQTT_CLIENT_ID: `kill-${run}`, MQTT_SHARE_GROUP: `kill${run}` }
    let ingest: RunningService = await launch(env)
    const publisher = await mqtt.connectAsync(mosquittoUrl, { clientId: `kill-pub-${run}` })
    const meter = 910
    const { sent, payloads } = stream(meter, BASE + 40 * QUARTER, 200, 40)
    try {
      for (const p of payloads) await publisher.publishAsync(senmlTopic('DL-CF-01', root), p, { qos: 1 })
      await eventually(async () => (await samplesOf(meter)) > 0, 'the first samples')
      ingest.child.kill('SIGKILL')
      await ingest.exited
      const atKill = await samplesOf(meter)
      // the broker keeps the session: what was not acknowledged, and what came since, waits there
      ingest = await launch(env)
      await eventually(async () => (await samplesOf(meter)) === sent.length, 'every sample after the restart', 60_000)
      await expectExact(meter, sent)
      process.stdout.write(
        `ingest faults: kill -9 with ${atKill} of ${sent.length} samples written; all present after\n`,
      )
    } finally {
      await publisher.endAsync()
      expect(await ingest.stop('SIGTERM')).toBe(0)
    }
  })

  it('PostgreSQL unreachable: nothing acknowledged, not ready; back: everything written', async () => {
    const target = new URL(database.url)
    const proxy = await startTcpProxy(target.hostname, Number(target.port))
    const ingest = await launch({
      ENERGY_DATABASE_URL: proxy.rewrite(database.url),
      MQTT_URL: mosquittoUrl,
      MQTT_CLIENT_ID: `db-${run}`,
      MQTT_SHARE_GROUP: `db${run}`,
    })
    const publisher = await mqtt.connectAsync(mosquittoUrl, { clientId: `db-pub-${run}` })
    const meter = 911
    const { sent, payloads } = stream(meter, BASE + 60 * QUARTER, 20, 25)
    try {
      proxy.cut()
      for (const p of payloads) await publisher.publishAsync(senmlTopic('DL-CF-01', root), p, { qos: 1 })
      await eventually(
        async () => (await fetch(`${ingest.url}/health/ready`)).status === 503,
        'readiness to say the database is gone',
      )
      expect(await samplesOf(meter)).toBe(0)
      proxy.restore()
      await eventually(async () => (await samplesOf(meter)) === sent.length, 'every sample once the database is back')
      await eventually(async () => (await fetch(`${ingest.url}/health/ready`)).status === 200, 'ready again')
      await expectExact(meter, sent)
    } finally {
      await publisher.endAsync()
      await ingest.stop('SIGTERM')
      await proxy.close()
    }
  })

  it.runIf(MOSQUITTO !== undefined || process.env.CI)(
    'the broker restarted, and the service cut from it: it reconnects, resumes its session, loses nothing',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mosquitto-'))
      // started as root, mosquitto drops to its own user, which must be able to save its sessions here
      chmodSync(dir, 0o777)
      const port = await freePort()
      writeFileSync(
        join(dir, 'mosquitto.conf'),
        `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location ${dir}/\n`,
      )
      const startBroker = async () => {
        const broker = spawn(MOSQUITTO ?? 'mosquitto', ['-c', join(dir, 'mosquitto.conf')], { stdio: 'ignore' })
        await eventually(() => answers(port), 'the broker')
        return broker
      }
      let broker = await startBroker()
      const proxy = await startTcpProxy('127.0.0.1', port)
      const ingest = await launch({
        MQTT_URL: `mqtt://127.0.0.1:${proxy.port}`,
        MQTT_CLIENT_ID: `restart-${run}`,
        // Mosquitto (2.0) restores a persistent session's plain subscription after its restart, not a shared one
        MQTT_SHARED: 'false',
      })
      const url = `mqtt://127.0.0.1:${port}`
      const meter = 912
      const { sent, payloads } = stream(meter, BASE + 80 * QUARTER, 30, 20)
      const publish = async (from: number, to: number) => {
        const publisher = await mqtt.connectAsync(url, { clientId: `restart-pub-${run}`, reconnectPeriod: 0 })
        for (const p of payloads.slice(from, to))
          await publisher.publishAsync(senmlTopic('DL-CF-01', root), p, { qos: 1 })
        await publisher.endAsync()
      }
      try {
        await publish(0, 10)
        await eventually(async () => (await samplesOf(meter)) === 200, 'the first packs')
        // cut from the broker: what is published meanwhile waits in its session
        proxy.cut()
        await publish(10, 20)
        await new Promise((r) => setTimeout(r, 500))
        expect(await samplesOf(meter)).toBe(200)
        proxy.restore()
        await eventually(async () => (await samplesOf(meter)) === 400, 'the packs sent while it was cut off')
        // the broker restarts (its persistence keeps the session); the service reconnects by itself
        broker.kill('SIGTERM')
        await new Promise((r) => broker.once('exit', r))
        broker = await startBroker()
        await publish(20, 30)
        await eventually(
          async () => (await samplesOf(meter)) === sent.length,
          'the packs after the broker restart',
          30_000,
        )
        await expectExact(meter, sent)
        // SIGTERM drains: the service exits cleanly
        expect(await ingest.stop('SIGTERM')).toBe(0)
      } finally {
        await ingest.stop('SIGKILL')
        await proxy.close()
        // mosquitto saves its sessions as it stops: the folder goes once it has exited
        await stopServerProgram(broker)
        rmSync(dir, { recursive: true, force: true })
      }
    },
  )
})
