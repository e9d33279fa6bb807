import { type BatchResult, inTransaction, type LiveMessage, takeMessages } from '@campus/energy-data/live'
import type pg from 'pg'
import { quarantineWhole, unavailable } from './failures.ts'
import type { IngestMetrics } from './metrics.ts'

export interface WriterOptions {
  batchMessages: number
  batchMs: number
  maxFutureMs: number
  metrics: IngestMetrics
  log: { warn: (o: object, m: string) => void; info: (o: object, m: string) => void }
}

interface Pending {
  message: LiveMessage
  done: () => void
}

/**
 * Messages from the broker, written in batches (one transaction each) and acknowledged only once
 * committed: a message held here when the process dies is redelivered by the broker. While the
 * database cannot be reached the batch is written again and again (backing off), acknowledging
 * nothing. A batch the database refuses for its content is written message by message, and a
 * message it still refuses is quarantined whole with the database's reason, so one bad message
 * never holds the stream.
 */
export class BatchWriter {
  private readonly queue: Pending[] = []
  private timer: NodeJS.Timeout | undefined
  private writing: Promise<void> | undefined
  private stopped = false
  private accepting = true
  private readonly pool: pg.Pool
  private readonly options: WriterOptions

  constructor(pool: pg.Pool, options: WriterOptions) {
    this.pool = pool
    this.options = options
  }

  /** Holds a message; `done` runs once it is committed (then the broker may forget it). */
  submit(message: LiveMessage, done: () => void): void {
    // draining: a message arriving now stays unacknowledged, the broker delivers it again
    if (!this.accepting) return
    this.queue.push({ message, done })
    if (this.queue.length >= this.options.batchMessages) this.kick()
    // batchMs 0: the next turn of the event loop; messages arriving while a batch is written form the next one
    else if (!this.timer) this.timer = setTimeout(() => this.kick(), this.options.batchMs)
  }

  /** Messages held and not yet committed. */
  get held(): number {
    return this.queue.length
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

  private async writeAll(): Promise<void> {
    let backoff = 250
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.options.batchMessages)
      try {
        await this.write(batch)
        this.queue.splice(0, batch.length)
        for (const p of batch) p.done()
        backoff = 250
      } catch (error) {
        if (this.stopped) return
        this.options.metrics.writeFailures.inc()
        this.options.log.warn(
          { err: error, held: this.queue.length },
          'the database cannot take the batch; it is held unacknowledged and written again',
        )
        await new Promise((resolve) => setTimeout(resolve, backoff))
        backoff = Math.min(backoff * 2, 5000)
      }
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      this.count(
        await inTransaction(this.pool, (c) =>
          takeMessages(
            c,
            batch.map((p) => p.message),
            this.options,
          ),
        ),
      )
    } catch (error) {
      if (unavailable(error) || batch.length === 1) {
        if (unavailable(error)) throw error
        await quarantineWhole(this.pool, batch[0]!.message, error)
        this.options.metrics.quarantined.inc({ code: 'not_written' })
        return
      }
      // one message of the batch is refused by the database: find it, write the others
      for (const p of batch) await this.write([p])
    }
  }

  private count(result: BatchResult): void {
    const m = this.options.metrics
    m.samples.inc(result.samples)
    m.duplicates.inc(result.duplicates)
    for (const r of result.refused) m.quarantined.inc({ code: r.code })
  }

  /** Writes what it holds (SIGTERM: drain), then takes nothing more. */
  async drain(): Promise<void> {
    this.accepting = false
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    while (this.writing || this.queue.length > 0) {
      if (!this.writing) this.kick()
      await this.writing
    }
    this.stopped = true
  }

  /** Stops at once, writing nothing more (what is held stays unacknowledged: the broker keeps it). */
  abandon(): void {
    this.accepting = false
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
  }
}
