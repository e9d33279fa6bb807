import { type Socket, connect as tcp } from 'node:net'
import { connect as tls } from 'node:tls'
import mqttPacket, { type IConnackPacket, type Packet } from 'mqtt-packet'
import type { HeldBytes } from './held-bytes.ts'
import { Frames, type OversizedPublish } from './mqtt-frames.ts'

/**
 * A subscriber's MQTT session that keeps many messages in flight: each QoS 1 message is handed on
 * at once and acknowledged when the code it was handed to says so, PUBACKs sent in the order the
 * messages came (MQTT 4.6). MQTT.js processes one incoming packet at a time and acknowledges a
 * message before it reads the next, so with acknowledgement after commit one connection carries one
 * message per commit, and a PINGRESP waits behind it; this session answers keepalives at once and
 * lets the writer commit hundreds of messages together. Packets are cut and encoded by mqtt-packet
 * (MQTT.js's own codec); frames are bounded (mqtt-frames.ts).
 */

export interface SessionOptions {
  url: string
  clientId: string
  username?: string | undefined
  password?: string | undefined
  /** The filter to subscribe to (on every connection), for a subscription shared or not. */
  filter: (shared: boolean) => string
  /** Whether to ask for a shared subscription where the broker offers one. */
  share: boolean
  sessionSeconds: number
  keepaliveSeconds: number
  /** Messages the broker may send ahead of their acknowledgement (MQTT 5 receive maximum). */
  inFlight: number
  /**
   * Payload bytes held ahead of their acknowledgement, over every connection (and the HTTP packs):
   * past the bound the session reads nothing more from the broker until acknowledgements free room
   * (TCP holds the rest back).
   */
  inFlightBytes: HeldBytes
  /** Largest packet held whole; a larger PUBLISH is handed on by its first bytes and size. */
  maxPacketBytes: number
  /** Bytes of an oversized payload kept. */
  headBytes: number
  log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void }
}

/** A message handed on: its topic and payload (or, oversized, the payload's first bytes and size). */
export interface Delivery {
  topic: string
  payload: Buffer
  /** Bytes the payload has when `payload` holds only its first ones. */
  size?: number
  ack: () => void
}

export interface Subscriber {
  /** MQTT version spoken, and whether the subscription is shared. */
  readonly version: 4 | 5
  readonly shared: boolean
  /** Whether connected and subscribed now. */
  connected(): boolean
  /** Leaves the broker: DISCONNECT (the session stays with the broker), no reconnection. */
  close(): Promise<void>
}

type Incoming = { packet: Packet } | { oversized: OversizedPublish }

/** A connection whose CONNACK came: packets after it wait until someone takes them. */
class Connection {
  readonly socket: Socket
  readonly connack: IConnackPacket
  private take: ((incoming: Incoming) => void) | undefined
  private readonly backlog: Incoming[] = []

  constructor(socket: Socket, connack: IConnackPacket) {
    this.socket = socket
    this.connack = connack
  }

  receive(incoming: Incoming): void {
    if (this.take) this.take(incoming)
    else this.backlog.push(incoming)
  }

  listen(take: (incoming: Incoming) => void): void {
    this.take = take
    for (const incoming of this.backlog.splice(0)) take(incoming)
  }
}

/** MQTT 3.1.1's CONNACK return code, and MQTT 5's reason code, for a protocol version the broker refuses. */
const VERSION_REFUSED = new Set([1, 0x84])

export class BrokerRefused extends Error {
  readonly code: number
  constructor(code: number, version: number) {
    super(`the broker refused the connection (MQTT ${version === 5 ? '5 reason' : '3.1.1 return'} code ${code})`)
    this.code = code
  }
}

/** Connects and waits for the CONNACK. */
function open(options: SessionOptions, version: 4 | 5): Promise<Connection> {
  const url = new URL(options.url)
  return new Promise((resolve, reject) => {
    const port = Number(url.port || (url.protocol === 'mqtts:' ? 8883 : 1883))
    const s =
      url.protocol === 'mqtts:'
        ? tls({ host: url.hostname, port, servername: url.hostname })
        : tcp({ host: url.hostname, port })
    s.setNoDelay(true)
    const parser = mqttPacket.parser({ protocolVersion: version })
    const frames = new Frames(options.maxPacketBytes, options.headBytes)
    let connection: Connection | undefined
    const fail = (error: Error) => {
      s.destroy()
      if (!connection) reject(error)
    }
    parser.on('error', (error: Error) => fail(error))
    parser.on('packet', (packet: Packet) => {
      if (connection) return connection.receive({ packet })
      if (packet.cmd !== 'connack') return fail(new Error(`expected CONNACK, got ${packet.cmd}`))
      const code = (packet.reasonCode ?? packet.returnCode ?? 0) as number
      if (code !== 0) return fail(new BrokerRefused(code, version))
      connection = new Connection(s, packet)
      resolve(connection)
    })
    s.on('data', (chunk: Buffer) => {
      try {
        frames.push(
          chunk,
          (whole) => parser.parse(whole),
          (oversized) => connection?.receive({ oversized }),
        )
      } catch (error) {
        fail(error as Error)
      }
    })
    s.on('error', (error) => fail(error))
    s.once('close', () => {
      if (!connection) reject(new Error('the broker closed the connection before CONNACK'))
    })
    s.once('connect', () => {
      s.write(
        mqttPacket.generate(
          {
            cmd: 'connect',
            protocolVersion: version,
            protocolId: 'MQTT',
            clientId: options.clientId,
            clean: false,
            keepalive: options.keepaliveSeconds,
            ...(options.username !== undefined ? { username: options.username } : {}),
            ...(options.password !== undefined ? { password: Buffer.from(options.password) } : {}),
            ...(version === 5
              ? { properties: { sessionExpiryInterval: options.sessionSeconds, receiveMaximum: options.inFlight } }
              : {}),
          },
          { protocolVersion: version },
        ),
      )
    })
  })
}

/**
 * One connection's life: it subscribes, hands messages on and acknowledges them in order, keeps
 * alive. `subscribed` settles when the broker grants (or refuses) the subscription; `ended` when the
 * connection is gone.
 */
function serve(
  connection: Connection,
  options: SessionOptions,
  version: 4 | 5,
  filter: string,
  deliver: (delivery: Delivery) => void,
  held: HeldBytes,
): { subscribed: Promise<void>; ended: Promise<void> } {
  const s = connection.socket
  let live = true
  // past the bytes bound the socket is not read (the broker waits on TCP) until room is freed
  const stopRoom = held.onRoom(() => {
    if (s.isPaused() && !s.destroyed) s.resume()
  })
  const send = (packet: Packet) => {
    if (!s.destroyed) s.write(mqttPacket.generate(packet, { protocolVersion: version }))
  }
  // QoS 1 messages in the order they came, acknowledged from the front once each is done
  const pending: Array<{ messageId: number; done: boolean }> = []
  const flush = () => {
    while (pending.length > 0 && (pending[0] as { done: boolean }).done) {
      send({ cmd: 'puback', messageId: (pending.shift() as { messageId: number }).messageId })
    }
  }
  const take = (topic: string, qos: number, messageId: number | undefined, payload: Buffer, size?: number) => {
    const sized = size !== undefined ? { size } : {}
    const release = held.take(payload.length)
    if (held.full()) s.pause()
    if (qos === 0 || messageId === undefined) return deliver({ topic, payload, ...sized, ack: release })
    const entry = { messageId, done: false }
    pending.push(entry)
    deliver({
      topic,
      payload,
      ...sized,
      ack: () => {
        release()
        // a message of a connection gone: the broker sends it again on the next one
        if (!live || entry.done) return
        entry.done = true
        flush()
      },
    })
  }
  let grant: { resolve: () => void; reject: (error: Error) => void } | undefined
  const subscribed = new Promise<void>((resolve, reject) => {
    grant = { resolve, reject }
  })
  let lastHeard = Date.now()
  s.on('data', () => {
    lastHeard = Date.now()
  })
  connection.listen((incoming) => {
    if ('oversized' in incoming) {
      const o = incoming.oversized
      return take(o.topic, o.qos, o.messageId, o.head, o.size)
    }
    const { packet } = incoming
    if (packet.cmd === 'publish') take(packet.topic, packet.qos, packet.messageId, Buffer.from(packet.payload))
    else if (packet.cmd === 'suback') {
      const code = (packet.granted as number[])[0] ?? 0x80
      if (code >= 0x80) grant?.reject(new Error(`the broker refused the subscription to ${filter} (code ${code})`))
      else grant?.resolve()
    } else if (packet.cmd === 'disconnect') {
      options.log.warn({ reasonCode: packet.reasonCode }, 'the broker ended the connection')
      s.destroy()
    }
  })
  const keepalive = setInterval(
    () => {
      // a socket not read (the bytes bound) hears nothing: its silence says nothing of the broker
      if (s.isPaused()) lastHeard = Date.now()
      else if (Date.now() - lastHeard > options.keepaliveSeconds * 1500) {
        options.log.warn({ keepaliveSeconds: options.keepaliveSeconds }, 'the broker stopped answering; reconnecting')
        s.destroy()
        return
      }
      send({ cmd: 'pingreq' })
    },
    (options.keepaliveSeconds * 1000) / 2,
  )
  const ended = new Promise<void>((resolve) =>
    s.once('close', () => {
      live = false
      clearInterval(keepalive)
      stopRoom()
      grant?.reject(new Error('the connection ended before the subscription was granted'))
      resolve()
    }),
  )
  // on every connection: a session the broker kept may have lost its shared subscription
  // (Mosquitto restores a persistent session's plain subscriptions after a restart, not its shared ones)
  send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: filter, qos: 1 }] })
  return { subscribed, ended }
}

/**
 * Connects (MQTT 5, or 3.1.1 where the broker speaks only that), subscribes, and hands every
 * message to `deliver`; returns once subscribed, and reconnects on its own, backing off, until closed.
 */
export async function startSubscriber(
  options: SessionOptions,
  deliver: (delivery: Delivery) => void,
): Promise<Subscriber> {
  let version: 4 | 5 = 5
  let first: Connection
  try {
    first = await open(options, 5)
  } catch (error) {
    // a broker that speaks MQTT 3.1.1 only (the embedded demo broker) refuses version 5, or closes
    const refusedVersion = error instanceof BrokerRefused && VERSION_REFUSED.has(error.code)
    if (!refusedVersion && !/before CONNACK/.test(String(error))) throw error
    version = 4
    first = await open(options, 4)
    options.log.info({}, 'the broker speaks MQTT 3.1.1: a persistent 3.1.1 session on the plain topic, one instance')
  }
  const shared = options.share && version === 5 && first.connack.properties?.sharedSubscriptionAvailable !== false
  const filter = options.filter(shared)
  let current: Connection | undefined = first
  let subscribedNow = false
  let closing = false
  let delay = 1000
  let timer: NodeJS.Timeout | undefined
  const held = options.inFlightBytes

  const life = (connection: Connection) => {
    current = connection
    const { subscribed, ended } = serve(connection, options, version, filter, deliver, held)
    subscribed.then(
      () => {
        subscribedNow = true
        delay = 1000
        options.log.info({ filter, clientId: options.clientId }, 'subscribed')
      },
      (error) => {
        if (connection.socket.destroyed) return
        options.log.warn({ err: error }, 'subscribe failed; reconnecting')
        connection.socket.destroy()
      },
    )
    void ended.then(() => {
      subscribedNow = false
      again()
    })
    return subscribed
  }
  const again = () => {
    if (closing) return
    timer = setTimeout(async () => {
      timer = undefined
      if (closing) return
      try {
        life(await open(options, version)).catch(() => undefined)
      } catch (error) {
        options.log.warn({ err: error, retryMs: delay }, 'cannot reach the broker; trying again')
        delay = Math.min(delay * 2, 10_000)
        again()
      }
    }, delay)
  }
  try {
    await life(first)
  } catch (error) {
    closing = true
    first.socket.destroy()
    throw error
  }
  return {
    version,
    shared,
    connected: () => subscribedNow,
    close: async () => {
      closing = true
      if (timer) clearTimeout(timer)
      const s = current?.socket
      if (!s || s.destroyed) return
      const closed = new Promise<void>((resolve) => s.once('close', () => resolve()))
      s.end(mqttPacket.generate({ cmd: 'disconnect' }, { protocolVersion: version }))
      const kill = setTimeout(() => s.destroy(), 2000)
      await closed
      clearTimeout(kill)
    },
  }
}
