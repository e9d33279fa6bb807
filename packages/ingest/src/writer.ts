import {
  type BatchResult,
  type IntakeLimits,
  inTransaction,
  type LiveMessage,
  type MessageResult,
  quarantineRefusals,
  type ResolvedMessage,
  resolveMessage,
  takeMessages,
} from '@campus/energy-data/live'
import type pg from 'pg'
import { describeFailure, unavailable } from './failures.ts'
import type { IngestMetrics } from './metrics.ts'
import { QuarantineNotices } from './quarantine-notices.ts'

export interface WriterOptions {
  /** Most messages in one transaction. */
  batchMessages: number
  /** Most samples in one transaction (a batch holds at least one message whatever its size). */
  batchSamples: number
  /** How long a batch waits for more messages before it is written (0: none). */
  batchMs: number
  limits: IntakeLimits
  /** A message held longer than this without a commit makes the writer "stalled" (readiness). */
  stallMs: number
  metrics: IngestMetrics
  log: {
    warn: (o: object, m: string) => void
    info: (o: object, m: string) => void
    error?: (o: object, m: string) => void
  }
}

interface Pending {
  message: LiveMessage
  /** The message read (its pack parsed), once it is among the next batches (`readAhead`). */
  resolved: ResolvedMessage | undefined
  /** Called once the message is committed (or kept in the quarantine). */
  done: (result: MessageResult) => void
  /** Over HTTP: the sender is told and sends again; the message is not held. */
  failed?: (error: unknown) => void
  /** Committed (a batch split in two commits its first half before the second may fail). */
  finished: boolean
}

/** What takes live messages and commits them: one writer, or several side by side (writer-lanes.ts). */
export interface Writer {
  /** Holds a broker's message; `done` runs once it is committed (then the broker may forget it). */
  submit(message: LiveMessage, done: () => void): void
  /** Takes an HTTP sender's message: its result once committed; WriterUnavailable when the database cannot take it now. */
  take(message: LiveMessage): Promise<MessageResult>
  /** Messages held and not yet committed. */
  readonly held: number
  /** Since when messages have been held without a commit, when longer than the stall bound; else undefined. */
  stalledSince(now?: number): number | undefined
  /** Writes what it holds (SIGTERM: drain), then takes nothing more. */
  drain(withinMs?: number): Promise<void>
  /** Stops at once, writing nothing more. */
  abandon(): void
}

/** /health/ready's check of a writer: "ok", or since when messages wait without a commit. */
export const writerReadiness = (writer: Writer) => (): string => {
  const since = writer.stalledSince()
  return since === undefined
    ? 'ok'
    : `stalled: ${writer.held} message(s) held without a commit since ${new Date(since).toISOString()}`
}

/** Thrown to an HTTP sender when the database cannot take its message now. */
export class WriterUnavailable extends Error {
  override name = 'WriterUnavailable'
}

/**
 * The one writer of live messages: each is read ahead of its batch (its pack parsed while earlier
 * ones are written; only the next two batches' worth, since a parsed sample takes several times
 * its bytes and the bytes held are what INGEST_IN_FLIGHT_MB bounds), then taken with every message
 * that arrived meanwhile in one transaction (group commit), and acknowledged, in the order they came, only once committed: a message held here when
 * the process dies is redelivered by the broker. While the database cannot be reached a broker's
 * messages are written again and again (backing off); an HTTP sender is answered at once and sends
 * again. A batch the database refuses for its content is split until the message it refuses is
 * alone; that one is kept in the quarantine with the database's reason, so one bad message never
 * holds the stream.
 */
export class BatchWriter implements Writer {
  private readonly queue: Pending[] = []
  private timer: NodeJS.Timeout | undefined
  private writing: Promise<void> | undefined
  private stopped = false
  private accepting = true
  private lastCommit = Date.now()
  private readonly pool: pg.Pool
  private readonly options: WriterOptions
  private readonly notices: QuarantineNotices

  constructor(pool: pg.Pool, options: WriterOptions) {
    this.pool = pool
    this.options = options
    this.notices = new QuarantineNotices((o, m) => options.log.warn(o, m))
  }

  /** Holds a broker's message; `done` runs once it is committed (then the broker may forget it). */
  submit(message: LiveMessage, done: () => void): void {
    // draining: a message arriving now stays unacknowledged, the broker delivers it again
    if (!this.accepting) return
    this.enqueue(message, { done: () => done() })
  }

  /** Takes an HTTP sender's message: its result once committed; WriterUnavailable when the database cannot take it now. */
  take(message: LiveMessage): Promise<MessageResult> {
    if (!this.accepting) return Promise.reject(new WriterUnavailable('the service is stopping'))
    return new Promise((resolve, reject) => this.enqueue(message, { done: resolve, failed: reject }))
  }

  private enqueue(message: LiveMessage, callbacks: Pick<Pending, 'done' | 'failed'>): void {
    if (this.queue.length === 0) this.lastCommit = Date.now()
    this.queue.push({ message, resolved: undefined, finished: false, ...callbacks })
    this.readAhead()
    if (this.options.batchMs === 0 || this.queue.length >= this.options.batchMessages) this.kick()
    else if (!this.timer) this.timer = setTimeout(() => this.kick(), this.options.batchMs)
  }

  /** Messages held and not yet committed. */
  get held(): number {
    return this.queue.length
  }

  /** Since when messages have been held without a commit, when longer than the stall bound; else undefined. */
  stalledSince(now = Date.now()): number | undefined {
    if (this.queue.length === 0) return undefined
    return now - this.lastCommit > this.options.stallMs ? this.lastCommit : undefined
  }

  private kick(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    if (this.writing || this.stopped) return
    this.writing = this.writeAll().finally(() => {
      this.writing = undefined
      if (this.queue.length > 0 && !this.stopped) this.kick()
    })
  }

  private read(p: Pending): ResolvedMessage {
    p.resolved ??= resolveMessage(p.message, this.options.limits.maxBytes)
    return p.resolved
  }

  /**
   * Reads the messages held, from the front, until those read hold two batches of samples: the
   * batch being written and the next. The others wait as they came, a pack of 1 MB as 1 MB rather
   * than as its parsed records.
   */
  private readAhead(): void {
    let samples = 0
    for (const p of this.queue) {
      if (samples >= 2 * this.options.batchSamples) return
      samples += this.read(p).samples.length
    }
  }

  /** The messages of the next transaction, from the front of the queue. */
  private nextBatch(): Pending[] {
    const batch: Pending[] = []
    let samples = 0
    for (const p of this.queue) {
      if (batch.length >= this.options.batchMessages) break
      const n = this.read(p).samples.length
      if (batch.length > 0 && samples + n > this.options.batchSamples) break
      batch.push(p)
      samples += n
    }
    return batch
  }

  private async writeAll(): Promise<void> {
    let backoff = 250
    while (this.queue.length > 0 && !this.stopped) {
      const batch = this.nextBatch()
      try {
        const written = this.write(batch)
        // the next batch is read while the database writes this one
        this.readAhead()
        await written
        this.queue.splice(0, batch.length)
        this.lastCommit = Date.now()
        backoff = 250
      } catch (error) {
        if (this.stopped) return
        this.options.metrics.writeFailures.inc()
        for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]?.finished) this.queue.splice(i, 1)
        // HTTP senders are told now and send again; the broker's messages stay held
        const http = this.queue.filter((p) => p.failed)
        for (const p of http) {
          this.queue.splice(this.queue.indexOf(p), 1)
          p.failed?.(new WriterUnavailable(describeFailure(error)))
        }
        if (this.queue.length === 0) return
        this.options.log.warn(
          { err: error, held: this.queue.length },
          'the database cannot take the batch; it is held unacknowledged and written again',
        )
        await new Promise((resolve) => setTimeout(resolve, backoff))
        backoff = Math.min(backoff * 2, 5000)
      }
    }
  }

  /** Writes a batch; each message's `done` is called, in order, once committed. */
  private async write(batch: Pending[]): Promise<void> {
    let result: BatchResult
    try {
      result = await inTransaction(this.pool, (c) =>
        takeMessages(
          c,
          batch.map((p) => this.read(p)),
          this.options.limits,
        ),
      )
    } catch (error) {
      if (unavailable(error)) throw error
      if (batch.length === 1) return this.keepRefused(batch[0] as Pending, error)
      // the database refuses something the batch holds: halves until the message it refuses is alone
      const half = Math.ceil(batch.length / 2)
      await this.write(batch.slice(0, half))
      await this.write(batch.slice(half))
      return
    }
    this.count(result)
    batch.forEach((p, i) => {
      this.finish(p, result.messages[i] as MessageResult)
    })
  }

  /** A message the database refused alone: kept whole in the quarantine with why, then let go. */
  private async keepRefused(p: Pending, error: unknown): Promise<void> {
    const refused = [
      {
        recordIndex: null,
        code: 'not_written' as const,
        reason: `the message could not be written (${describeFailure(error)})`,
      },
    ]
    try {
      await inTransaction(this.pool, (c) => quarantineRefusals(c, [{ message: p.message, refused }]))
      this.options.metrics.quarantined.inc({ code: 'not_written' })
    } catch (failure) {
      if (unavailable(failure)) throw failure
      // not even its quarantine row can be written: said loudly, and let go so the stream goes on
      this.options.metrics.dropped.inc()
      this.options.log.warn({ err: failure, source: p.message.source }, 'a message could not be kept; dropped')
    }
    this.finish(p, {
      samples: 0,
      duplicates: 0,
      refused: refused.map((r) => ({ index: r.recordIndex, code: r.code, reason: r.reason })),
    })
  }

  private finish(p: Pending, result: MessageResult): void {
    const message = p.message
    for (const r of result.refused) this.notices.refused(message.datalogger ?? message.source, r.code, r.reason)
    p.finished = true
    p.done(result)
  }

  private count(result: BatchResult): void {
    const m = this.options.metrics
    m.samples.inc(result.samples)
    m.duplicates.inc(result.duplicates)
    for (const r of result.refused) m.quarantined.inc({ code: r.code })
  }

  /**
   * Writes what it holds (SIGTERM: drain), then takes nothing more. What is not committed within
   * `withinMs` (a database gone) is let go unacknowledged: the broker keeps it for the next start.
   */
  async drain(withinMs = 8000): Promise<void> {
    this.accepting = false
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    const deadline = Date.now() + withinMs
    while ((this.writing || this.queue.length > 0) && Date.now() < deadline) {
      if (!this.writing) this.kick()
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        this.writing,
        new Promise((resolve) => {
          timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))
        }),
      ])
      clearTimeout(timer)
    }
    if (this.queue.length > 0) {
      this.options.log.warn(
        { held: this.queue.length },
        'stopping with messages not committed: the broker delivers them again',
      )
    }
    this.abandon()
  }

  /** Stops at once, writing nothing more (what is held stays unacknowledged: the broker keeps it). */
  abandon(): void {
    this.accepting = false
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    for (const p of this.queue.splice(0)) p.failed?.(new WriterUnavailable('the service is stopping'))
  }
}
