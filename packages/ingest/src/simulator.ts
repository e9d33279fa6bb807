import {
  DATALOGGERS,
  environmentAt,
  KINDS,
  METER_NAME_BASE,
  METERS,
  meterSignal,
  QUARTER_MS,
  SENML_UNIT_OF,
  signalsAt,
} from '@campus/energy-data/live'
import mqtt, { type MqttClient } from 'mqtt'
import { senmlTopic } from './service.ts'

/** The seed the demo data was made with: the live samples continue its model. */
const DEMO_SEED = 1

/**
 * Simulated dataloggers for the live demo: one MQTT client per datalogger in service, publishing
 * a SenML pack of its meters every `intervalMs` (QoS 1), continuing the demo seed's model into real
 * time. Power and weather meters send readings in the meter's unit, except the PV inverters in W
 * (converted on arrival); energy meters send increments in Wh; water meters their cumulative
 * register in litres (`s`).
 */
export async function startSimulatedDataloggers(
  url: string,
  options: {
    intervalMs?: number
    topicRoot?: string
    log?: (line: string) => void
    /** A datalogger's credential at the broker (its client id is its username, the datalogger's id). */
    login?: (datalogger: string) => Promise<{ username: string; password: string }>
    /**
     * Where the volume meters' registers stand, m³ by meter id (the stored readings): a register
     * goes on from there, as a real one does across a restart. Else from 1,000 m³.
     */
    registers?: ReadonlyMap<number, number>
  } = {},
): Promise<{ stop: () => Promise<void> }> {
  const intervalMs = options.intervalMs ?? 5000
  const loggers = DATALOGGERS.filter((d) => d.date_to === null)
    .map((d) => ({ id: d.id, meters: METERS.filter((m) => m.datalogger === d.id) }))
    .filter((d) => d.meters.length > 0)
  // litres, as sent
  const registers = new Map([...(options.registers ?? [])].map(([id, m3]) => [id, m3 * 1000]))
  const clients: MqttClient[] = []
  for (const logger of loggers) {
    const login = options.login ? await options.login(logger.id) : {}
    const client = await mqtt.connectAsync(url, { clientId: logger.id, ...login, reconnectPeriod: 1000 })
    // once per cause: a datalogger whose id another client took, or whose credential was issued anew, is refused
    let said = ''
    client.on('error', (error) => {
      if (error.message !== said) options.log?.(`simulated ${logger.id}: ${error.message} (trying again every second)`)
      said = error.message
    })
    client.on('connect', () => {
      if (said) options.log?.(`simulated ${logger.id}: connected again`)
      said = ''
    })
    clients.push(client)
  }
  const publish = () => {
    const now = Date.now()
    const signals = signalsAt(DEMO_SEED, Math.floor(now / QUARTER_MS), environmentAt(DEMO_SEED, now))
    loggers.forEach((logger, i) => {
      const records = logger.meters.map((m): Record<string, string | number | undefined> => {
        const { signal, factor } = meterSignal(m)
        const base = (signals[signal] ?? 0) * factor
        const wobble = 1 + 0.01 * Math.sin(now / 7000 + m.id)
        const kind = KINDS[m.kind]
        if (kind.combination === 'sum') {
          // the quarter hour's amount, shared among the samples of the quarter hour
          const increment = Math.max(0, (base * intervalMs) / QUARTER_MS) * wobble
          if (m.kind === 'volume') {
            const litres = (registers.get(m.id) ?? 1_000_000) + increment * 1000
            registers.set(m.id, litres)
            return { n: String(m.id), u: 'l', s: Math.round(litres * 1000) / 1000 }
          }
          return { n: String(m.id), u: 'Wh', v: Math.round(increment * 1000 * 1000) / 1000 }
        }
        const value = base * wobble
        if (m.brick === 'brick:PV_Panel') return { n: String(m.id), u: 'W', v: Math.round(value * 1000) }
        return { n: String(m.id), u: SENML_UNIT_OF[kind.unit], v: Math.round(value * 1000) / 1000 }
      })
      // the base name and time once, on the first record; each record names its meter by id
      const [first, ...others] = records
      const payload = JSON.stringify([{ bn: METER_NAME_BASE, bt: Math.floor(now / 1000), ...first }, ...others])
      clients[i]!.publish(senmlTopic(logger.id, options.topicRoot), payload, { qos: 1 }, (err) => {
        if (err) options.log?.(`simulated ${logger.id}: ${err.message}`)
      })
    })
  }
  publish()
  const timer = setInterval(publish, intervalMs)
  return {
    stop: async () => {
      clearInterval(timer)
      // forced: a pack a refused datalogger still holds would be waited for forever; the next start publishes anew
      await Promise.all(clients.map((c) => c.endAsync(true)))
    },
  }
}
