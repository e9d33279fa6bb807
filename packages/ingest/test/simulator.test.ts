/** The simulated dataloggers of `npm start` publish where the ingest service listens. */
import {
  type BrokerUser,
  DATALOGGERS,
  generateBrokerPassword,
  hashBrokerPassword,
  METERS,
} from '@campus/energy-data/live'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmbeddedBroker } from '../src/broker.ts'
import { senmlTopics } from '../src/service.ts'
import { startSimulatedDataloggers } from '../src/simulator.ts'

/** The broker's users, as the energy database would hold them. */
const users = new Map<string, BrokerUser & { password_hash: string }>()
const login = async (username: string, role: BrokerUser['role']) => {
  const password = generateBrokerPassword()
  users.set(username, { username, role, password_hash: await hashBrokerPassword(password) })
  return { clientId: username, username, password }
}

let broker: Awaited<ReturnType<typeof startEmbeddedBroker>>
beforeAll(async () => {
  broker = await startEmbeddedBroker('127.0.0.1', 0, { find: async (u) => users.get(u), topicRoot: 'site2' })
})
afterAll(async () => broker?.close())

describe('simulated dataloggers', () => {
  it('publish one SenML pack per datalogger in service under MQTT_TOPIC_ROOT with its own credential', async () => {
    const listener = await mqtt.connectAsync(broker.url, await login('simulator-test', 'ingest'))
    const received: Array<{ topic: string; pack: Array<Record<string, unknown>> }> = []
    listener.on('message', (topic, payload) => received.push({ topic, pack: JSON.parse(payload.toString()) }))
    await listener.subscribeAsync(senmlTopics('site2'), { qos: 1 })
    const inService = DATALOGGERS.filter((d) => d.date_to === null && METERS.some((m) => m.datalogger === d.id))
    const simulated = await startSimulatedDataloggers(broker.url, {
      topicRoot: 'site2',
      intervalMs: 60_000,
      login: (id) => login(id, 'datalogger'),
    })
    try {
      const deadline = Date.now() + 10_000
      while (received.length < inService.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      // a moment more: nothing else may arrive, under either root
      await new Promise((r) => setTimeout(r, 300))
    } finally {
      await simulated.stop()
      await listener.endAsync()
    }
    expect(received.map((m) => m.topic).sort()).toEqual(inService.map((d) => `site2/${d.id}/senml`).sort())
    for (const { pack } of received) {
      expect(pack[0]?.bn).toBe('urn:campus:meter:')
      expect(pack.every((record) => typeof record.n === 'string')).toBe(true)
    }
  })

  it('go on from the registers where they stand: a water register sent after a restart is never lower', async () => {
    const water = METERS.filter(
      (m) => m.kind === 'volume' && DATALOGGERS.some((d) => d.id === m.datalogger && d.date_to === null),
    )
    expect(water.length).toBeGreaterThan(0)
    const standing = new Map(water.map((m, i) => [m.id, 2345.5 + i]))
    const listener = await mqtt.connectAsync(broker.url, await login('simulator-registers', 'ingest'))
    const sent = new Map<number, number>()
    listener.on('message', (_topic, payload) => {
      for (const record of JSON.parse(payload.toString()) as Array<{ n: string; s?: number }>) {
        if (record.s !== undefined && !sent.has(Number(record.n))) sent.set(Number(record.n), record.s)
      }
    })
    await listener.subscribeAsync(senmlTopics('site2'), { qos: 1 })
    const simulated = await startSimulatedDataloggers(broker.url, {
      topicRoot: 'site2',
      intervalMs: 60_000,
      login: (id) => login(id, 'datalogger'),
      registers: standing,
    })
    try {
      await expect.poll(() => sent.size, { timeout: 10_000 }).toBe(water.length)
    } finally {
      await simulated.stop()
      await listener.endAsync()
    }
    // litres: the stored reading (m³) and at most a minute of flow
    for (const [id, m3] of standing) {
      expect(sent.get(id), `meter ${id}`).toBeGreaterThanOrEqual(m3 * 1000)
      expect(sent.get(id), `meter ${id}`).toBeLessThan(m3 * 1000 + 1000)
    }
  })

  it('stop at once, and say why, when one of them is taken over with a renewed credential', async () => {
    const lines: string[] = []
    const simulated = await startSimulatedDataloggers(broker.url, {
      topicRoot: 'site2',
      intervalMs: 200,
      login: (id) => login(id, 'datalogger'),
      log: (line) => lines.push(line),
    })
    // as the README's example does: a new credential for a demo datalogger, a pack under its client id
    const id = DATALOGGERS.find((d) => d.date_to === null && METERS.some((m) => m.datalogger === d.id))?.id as string
    const taker = await mqtt.connectAsync(broker.url, { ...(await login(id, 'datalogger')), reconnectPeriod: 0 })
    await taker.publishAsync(`site2/${id}/senml`, '[]', { qos: 1 })
    await taker.endAsync()
    await expect.poll(() => lines.find((line) => line.includes(id))).toMatch(/refused|not authorized|bad user/i)
    // a hang guard: before, stop waited forever for the packs the broker would never acknowledge
    const stopped = await Promise.race([
      simulated.stop().then(() => 'stopped'),
      new Promise((r) => setTimeout(() => r('still waiting after 10 s'), 10_000)),
    ])
    expect(stopped).toBe('stopped')
  })
})
