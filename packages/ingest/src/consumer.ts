import { hostname } from 'node:os'
import mqtt, { type IConnackPacket, type MqttClient } from 'mqtt'
import { DATALOGGER_OF_TOPIC, senmlTopics } from './service.ts'
import type { BatchWriter } from './writer.ts'

export interface ConsumerOptions {
  url: string
  clientId: string
  /** The shared-subscription group; undefined: a plain subscription (one instance). */
  shareGroup: string | undefined
  sessionSeconds: number
  /** The first level of the dataloggers' topics (MQTT_TOPIC_ROOT). */
  topicRoot: string
  writer: BatchWriter
  onMessage: () => void
  log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void }
}

/** Stable across restarts of one instance (its persistent session), distinct between instances on one host. */
export const defaultClientId = (port: number): string => `ingest-${hostname()}-${port}`.slice(0, 20)

/**
 * The subscriber: MQTT 5, QoS 1, a persistent session (clean start off, a session expiry), on a
 * shared subscription so that instances of one group split the stream. Each message is
 * acknowledged only when the write holding it has committed (MQTT.js' handleMessage): one not
 * acknowledged (the process died, the database was down) is delivered again by the broker, and the
 * samples' key (meter, instant) makes the second delivery change nothing. A broker that speaks only
 * MQTT 3.1.1 (the embedded demo broker) gets a persistent 3.1.1 session on the plain topic: one
 * instance, nothing counted twice either way.
 */
export async function startConsumer(options: ConsumerOptions): Promise<{ client: MqttClient; shared: boolean }> {
  const connect = async (protocolVersion: 4 | 5) => {
    const client = mqtt.connect(options.url, {
      protocolVersion,
      clientId: options.clientId,
      clean: false,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
      ...(protocolVersion === 5 ? { properties: { sessionExpiryInterval: options.sessionSeconds } } : {}),
    })
    // called before the acknowledgement is sent, which waits for its callback (MQTT 5 and 3.1.1 alike)
    client.handleMessage = (packet, callback) => {
      const topic = packet.cmd === 'publish' ? packet.topic : ''
      const datalogger = DATALOGGER_OF_TOPIC.exec(topic)?.[1]
      if (packet.cmd !== 'publish') return callback()
      options.onMessage()
      options.writer.submit(
        {
          source: `mqtt:${topic}`,
          payload: Buffer.from(packet.payload).toString('utf8'),
          ...(datalogger ? { datalogger } : {}),
          receivedMs: Date.now(),
        },
        () => callback(),
      )
    }
    try {
      const connack = await new Promise<IConnackPacket>((resolve, reject) => {
        client.once('connect', resolve)
        client.once('error', reject)
      })
      return { client, connack }
    } catch (error) {
      client.end(true)
      throw error
    }
  }
  let connection: { client: MqttClient; connack: IConnackPacket }
  let version: 4 | 5 = 5
  try {
    connection = await connect(5)
  } catch (error) {
    // CONNACK 0x01 (3.1.1: unacceptable protocol version), or a broker closing on a version 5 CONNECT
    // expected of the embedded demo broker; a campus broker refusing MQTT 5 shows here too
    options.log.info(
      { reason: (error as Error).message },
      'the broker speaks MQTT 3.1.1 only: a persistent 3.1.1 session on the plain topic, one instance',
    )
    connection = await connect(4)
    version = 4
  }
  const { client } = connection
  // a broker may speak MQTT 5 and still not share subscriptions (it says so in its CONNACK)
  const shared =
    options.shareGroup !== undefined &&
    version === 5 &&
    connection.connack.properties?.sharedSubscriptionAvailable !== false
  const topics = senmlTopics(options.topicRoot)
  const filter = shared ? `$share/${options.shareGroup}/${topics}` : topics
  const subscribe = async () => {
    await client.subscribeAsync(filter, { qos: 1 })
    options.log.info({ filter, clientId: options.clientId }, 'subscribed')
  }
  // on every reconnection: a session the broker kept may have lost its shared subscription (Mosquitto
  // restores a persistent session's plain subscriptions after a restart, not always its shared ones)
  client.on('connect', () => {
    void subscribe().catch((err) => options.log.warn({ err }, 'subscribe failed'))
  })
  client.on('reconnect', () => options.log.info({}, 'reconnecting to the broker'))
  client.on('error', (err) => options.log.warn({ err }, 'broker connection error'))
  await subscribe()
  return { client, shared }
}
