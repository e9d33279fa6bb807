import { hostname } from 'node:os'
import type { HeldBytes } from './held-bytes.ts'
import { type Subscriber, startSubscriber } from './mqtt-session.ts'
import { DATALOGGER_OF_TOPIC, senmlTopics } from './service.ts'
import type { Writer } from './writer.ts'

export interface ConsumerOptions {
  url: string
  clientId: string
  username?: string | undefined
  password?: string | undefined
  /** The shared-subscription group; undefined: a plain subscription (one instance). */
  shareGroup: string | undefined
  sessionSeconds: number
  keepaliveSeconds: number
  /** Messages in flight: the broker sends this many ahead of their acknowledgement. */
  inFlight: number
  /** The payload bytes in flight, bounded (past it nothing more is read until commits free room). */
  inFlightBytes: HeldBytes
  /** The largest message taken; a larger one is quarantined by its first bytes. */
  maxMessageBytes: number
  /** The first level of the dataloggers' topics (MQTT_TOPIC_ROOT). */
  topicRoot: string
  writer: Writer
  onMessage: () => void
  log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void }
}

/** Stable across restarts of one instance (its persistent session), distinct between instances on one host. */
export const defaultClientId = (port: number): string => `ingest-${hostname()}-${port}`.slice(0, 20)

/** Of a message too large to take, the bytes kept (the quarantine shows them). */
const OVERSIZED_HEAD_BYTES = 4096

/**
 * The subscriber: MQTT 5, QoS 1, a persistent session (clean start off, a session expiry), on a
 * shared subscription so that instances of one group split the stream. Each message goes to the
 * writer as it arrives and is acknowledged only when the transaction holding it has committed: one
 * not acknowledged (the process died, the database was down) is delivered again by the broker, and
 * the samples' key makes the second delivery change nothing. A broker that speaks only MQTT 3.1.1
 * (the embedded demo broker) gets a persistent 3.1.1 session on the plain topic: one instance,
 * nothing counted twice either way.
 */
export async function startConsumer(options: ConsumerOptions): Promise<Subscriber> {
  return startSubscriber(
    {
      url: options.url,
      clientId: options.clientId,
      username: options.username,
      password: options.password,
      share: options.shareGroup !== undefined,
      filter: (shared) =>
        shared ? `$share/${options.shareGroup}/${senmlTopics(options.topicRoot)}` : senmlTopics(options.topicRoot),
      sessionSeconds: options.sessionSeconds,
      keepaliveSeconds: options.keepaliveSeconds,
      inFlight: options.inFlight,
      inFlightBytes: options.inFlightBytes,
      // a PUBLISH holds its topic and properties beside the payload
      maxPacketBytes: options.maxMessageBytes + 65_536,
      headBytes: OVERSIZED_HEAD_BYTES,
      log: options.log,
    },
    (delivery) => {
      options.onMessage()
      options.writer.submit(
        {
          source: `mqtt:${delivery.topic}`,
          payload: delivery.payload,
          ...(delivery.size !== undefined ? { size: delivery.size } : {}),
          // a topic naming no datalogger (campus//senml) is refused: its meters cannot be checked
          datalogger: DATALOGGER_OF_TOPIC.exec(delivery.topic)?.[1] ?? null,
          receivedMs: Date.now(),
        },
        delivery.ack,
      )
    },
  )
}
