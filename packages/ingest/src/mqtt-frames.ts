/**
 * MQTT packets cut from a byte stream with a bound on what is held: a packet up to `maxPacket`
 * bytes is handed whole to the parser; a larger PUBLISH is never held - its topic, packet id and
 * first bytes are kept, the rest skipped as it streams by - so one huge message cannot exhaust
 * the process's memory and is still acknowledged and quarantined for its size. (MQTT.js and
 * mqtt-packet hold any packet whole, up to MQTT's 256 MB.)
 */

/** A PUBLISH too large to hold: what is kept of it. */
export interface OversizedPublish {
  topic: string
  qos: number
  messageId: number | undefined
  /** The payload's first bytes. */
  head: Buffer
  /** The whole packet's remaining length, in bytes. */
  size: number
}

interface Skipping {
  /** Bytes of the packet still to skip (after the part read). */
  remaining: number
  /** The start of the packet read so far (fixed header excluded), up to `keep` bytes. */
  start: Buffer
  keep: number
  qos: number
  size: number
  done: boolean
}

export class Frames {
  private buffer: Buffer = Buffer.alloc(0)
  private skipping: Skipping | undefined
  private readonly maxPacket: number
  private readonly headBytes: number

  constructor(maxPacket: number, headBytes: number) {
    this.maxPacket = maxPacket
    this.headBytes = headBytes
  }

  /** Takes a chunk; calls `whole` with each complete packet and `oversized` with each PUBLISH skipped. */
  push(chunk: Buffer, whole: (packet: Buffer) => void, oversized: (publish: OversizedPublish) => void): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    for (;;) {
      if (this.skipping) {
        if (!this.skip(oversized)) return
        continue
      }
      const header = readFixedHeader(this.buffer)
      if (!header) return
      const total = header.headerBytes + header.remaining
      if (header.remaining <= this.maxPacket) {
        if (this.buffer.length < total) return
        whole(this.buffer.subarray(0, total))
        this.buffer = this.buffer.subarray(total)
        continue
      }
      const type = (this.buffer[0] as number) >> 4
      if (type !== 3) throw new Error(`an MQTT packet of type ${type} holds ${header.remaining} bytes`)
      this.skipping = {
        remaining: header.remaining,
        start: Buffer.alloc(0),
        // topic (up to 65,537 bytes), packet id, MQTT 5 properties (bounded in practice), head of payload
        keep: Math.min(header.remaining, 65_537 + 2 + 4096 + this.headBytes),
        qos: ((this.buffer[0] as number) >> 1) & 3,
        size: header.remaining,
        done: false,
      }
      this.buffer = this.buffer.subarray(header.headerBytes)
    }
  }

  /** Skips the packet being skipped; false while more bytes are needed. */
  private skip(oversized: (publish: OversizedPublish) => void): boolean {
    const s = this.skipping as Skipping
    const wanted = s.keep - s.start.length
    if (wanted > 0) {
      const part = this.buffer.subarray(0, wanted)
      s.start = Buffer.concat([s.start, part])
      this.buffer = this.buffer.subarray(part.length)
      s.remaining -= part.length
    }
    if (s.start.length >= s.keep && !s.done) {
      s.done = true
      oversized(this.describe(s))
    }
    const dropped = Math.min(s.remaining, this.buffer.length)
    this.buffer = this.buffer.subarray(dropped)
    s.remaining -= dropped
    if (s.remaining > 0) return false
    this.skipping = undefined
    return true
  }

  private describe(s: Skipping): OversizedPublish {
    const topicLength = s.start.readUInt16BE(0)
    const topic = s.start.subarray(2, 2 + topicLength).toString('utf8')
    let at = 2 + topicLength
    const messageId = s.qos > 0 ? s.start.readUInt16BE(at) : undefined
    if (s.qos > 0) at += 2
    return { topic, qos: s.qos, messageId, head: s.start.subarray(at, at + this.headBytes), size: s.size }
  }

  /** Forgets what it held (a new connection starts from nothing). */
  reset(): void {
    this.buffer = Buffer.alloc(0)
    this.skipping = undefined
  }
}

/** MQTT's fixed header: the remaining length, a variable byte integer of 1 to 4 bytes. */
function readFixedHeader(buffer: Buffer): { headerBytes: number; remaining: number } | undefined {
  let remaining = 0
  let multiplier = 1
  for (let i = 1; i <= 4; i++) {
    if (buffer.length <= i) return undefined
    const byte = buffer[i] as number
    remaining += (byte & 127) * multiplier
    if ((byte & 128) === 0) return { headerBytes: i + 1, remaining }
    multiplier *= 128
  }
  throw new Error('malformed MQTT remaining length')
}
