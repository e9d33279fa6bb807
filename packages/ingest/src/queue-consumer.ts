import amqp, { type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib'
import { DATALOGGER_OF_TOPIC, senmlTopics } from './service.ts'
import type { Writer } from './writer.ts'

export interface QueueConsumerOptions {
  /** The broker's nodes (amqp://user:password@host:port): the consumer goes to the next when one is gone. */
  urls: string[]
  /** The quorum queue the dataloggers' packs are routed to. */
  queue: string
  /** Messages delivered ahead of their acknowledgement (basic.qos): the batches the writer commits together. */
  prefetch: number
  /** The first level of the dataloggers' MQTT topics (MQTT_TOPIC_ROOT). */
  topicRoot: string
  /** The largest message taken; a larger one is quarantined by its first bytes. */
  maxMessageBytes: number
  writer: Writer
  onMessage: () => void
  log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void }
}

export interface QueueConsumer {
  /** Whether consuming now. */
  connected(): boolean
  /** The node consuming from now. */
  node(): string | undefined
  /** Stops consuming and leaves the broker: what is not acknowledged goes back to the queue. */
  close(): Promise<void>
}

/** Of a message too large to take, the bytes kept (the quarantine shows them). */
const OVERSIZED_HEAD_BYTES = 4096

/**
 * RabbitMQ's MQTT plugin publishes a datalogger's pack to amq.topic with the topic's levels joined
 * by dots (and a dot of the topic read as a slash): the routing key, read back as the topic.
 */
export const topicOfRoutingKey = (key: string): string => key.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'))
/** The binding of every datalogger's topic under `root`: the MQTT filter `<root>/+/senml` as a routing pattern. */
export const routingPattern = (root: string): string =>
  senmlTopics(root)
    .replace(/[./]/g, (c) => (c === '/' ? '.' : '/'))
    .replace('+', '*')

/**
 * A competing consumer of a replicated queue (RabbitMQ, a quorum queue): the dataloggers publish
 * over MQTT to any node of the cluster, the broker confirms a pack to them (PUBACK) once a majority
 * of the queue's replicas hold it, and each ingest instance takes up to `prefetch` packs, writes
 * them with the one writer and acknowledges each once its transaction has committed. A pack not
 * acknowledged when the instance or its connection dies goes back to the queue for another
 * instance; the samples' key makes a second delivery change nothing. The queue and its binding
 * are declared on every connection (idempotent), so packs are kept from the first instance's start.
 */
export async function startQueueConsumer(options: QueueConsumerOptions): Promise<QueueConsumer> {
  let closing = false
  let current: { model: ChannelModel; channel: Channel; url: string } | undefined
  let next = 0

  /** Connects to the first node that takes the consumer (from the last one that did); its URL. */
  const open = async (): Promise<string> => {
    const errors: string[] = []
    for (let tried = 0; tried < options.urls.length; tried++) {
      const url = options.urls[(next + tried) % options.urls.length] as string
      try {
        const model = await amqp.connect(url, { timeout: 5000 })
        try {
          const channel = await model.createChannel()
          await channel.assertQueue(options.queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } })
          await channel.bindQueue(options.queue, 'amq.topic', routingPattern(options.topicRoot))
          await channel.prefetch(options.prefetch)
          const session = { model, channel, url }
          current = session
          next = (next + tried) % options.urls.length
          model.on('error', () => undefined)
          channel.on('error', () => undefined)
          model.on('close', () => {
            if (current === session) current = undefined
            if (closing) return
            // the node is gone (or dropped us): what we held goes back to the queue; take it from another
            options.log.warn({ broker: redact(url) }, 'the broker connection closed; connecting to the next node')
            next = (next + 1) % options.urls.length
            void reconnect(500)
          })
          await channel.consume(options.queue, (message) => {
            if (message) take(session, message)
          })
          return url
        } catch (error) {
          await model.close().catch(() => undefined)
          throw error
        }
      } catch (error) {
        errors.push(`${redact(url)}: ${(error as Error).message}`)
      }
    }
    throw new Error(`no broker node takes the consumer (${errors.join('; ')})`)
  }

  const reconnect = async (delayMs: number): Promise<void> => {
    if (closing) return
    await new Promise((r) => setTimeout(r, delayMs))
    if (closing || current) return
    try {
      const url = await open()
      options.log.info({ broker: redact(url) }, 'consuming from the queue again')
    } catch (error) {
      options.log.warn({ err: error, retryMs: delayMs }, 'cannot consume from the queue; trying again')
      return reconnect(Math.min(delayMs * 2, 10_000))
    }
  }

  const take = (session: NonNullable<typeof current>, message: ConsumeMessage): void => {
    options.onMessage()
    const topic = topicOfRoutingKey(message.fields.routingKey)
    const whole = message.content
    const oversized = whole.length > options.maxMessageBytes
    options.writer.submit(
      {
        // what the datalogger published on: its MQTT topic (the quarantine's replay checks its meters by it)
        source: `mqtt:${topic}`,
        // of an oversized message a copy of its head, so that the whole is let go at once
        payload: oversized ? Buffer.from(whole.subarray(0, OVERSIZED_HEAD_BYTES)) : whole,
        ...(oversized ? { size: whole.length } : {}),
        datalogger: DATALOGGER_OF_TOPIC.exec(topic)?.[1] ?? null,
        receivedMs: Date.now(),
      },
      () => {
        // a channel gone since: the broker has already put the message back for another consumer
        if (current !== session) return
        try {
          session.channel.ack(message)
        } catch {
          // closed meanwhile: the same
        }
      },
    )
  }

  await open()
  return {
    connected: () => current !== undefined,
    node: () => (current ? redact(current.url) : undefined),
    async close() {
      closing = true
      const session = current
      current = undefined
      await session?.model.close().catch(() => undefined)
    },
  }
}

/** A broker URL without its password, for logs and readiness. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'amqp://?'
  }
}
