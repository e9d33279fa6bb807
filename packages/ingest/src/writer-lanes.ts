import type { LiveMessage, MessageResult } from '@campus/energy-data/live'
import type pg from 'pg'
import { BatchWriter, type Writer, type WriterOptions } from './writer.ts'

/**
 * Writers side by side, each committing its own transactions: a datalogger's messages go to one of
 * them while any is held (the one holding the fewest messages when it has none held), so two
 * transactions written at once hold different dataloggers' meters and never wait for each other's
 * meter locks (a group row mirrored from both they take in turn, in one order), and the database
 * works on one while this process reads the next. A broker's messages are
 * still acknowledged in the order they came (the MQTT session holds a later PUBACK until the
 * earlier ones are done).
 */
export class WriterLanes implements Writer {
  private readonly lanes: BatchWriter[]
  /** Each datalogger with messages held: its lane, and how many (bounded by the messages held). */
  private readonly placed = new Map<string | null | undefined, { lane: BatchWriter; held: number }>()

  constructor(pool: pg.Pool, options: WriterOptions, lanes: number) {
    this.lanes = Array.from({ length: Math.max(1, lanes) }, () => new BatchWriter(pool, options))
  }

  private place(message: LiveMessage): { lane: BatchWriter; release: () => void } {
    const key = message.datalogger
    let entry = this.placed.get(key)
    if (!entry) {
      const lane = this.lanes.reduce((a, b) => (b.held < a.held ? b : a))
      entry = { lane, held: 0 }
      this.placed.set(key, entry)
    }
    entry.held++
    const placed = entry
    let released = false
    return {
      lane: placed.lane,
      release: () => {
        if (released) return
        released = true
        if (--placed.held === 0 && this.placed.get(key) === placed) this.placed.delete(key)
      },
    }
  }

  submit(message: LiveMessage, done: () => void): void {
    const { lane, release } = this.place(message)
    lane.submit(message, () => {
      release()
      done()
    })
  }

  take(message: LiveMessage): Promise<MessageResult> {
    const { lane, release } = this.place(message)
    return lane.take(message).finally(release)
  }

  get held(): number {
    return this.lanes.reduce((sum, lane) => sum + lane.held, 0)
  }

  stalledSince(now = Date.now()): number | undefined {
    const since = this.lanes.map((lane) => lane.stalledSince(now)).filter((s) => s !== undefined)
    return since.length === 0 ? undefined : Math.min(...since)
  }

  async drain(withinMs?: number): Promise<void> {
    await Promise.all(this.lanes.map((lane) => lane.drain(withinMs)))
    this.placed.clear()
  }

  abandon(): void {
    for (const lane of this.lanes) lane.abandon()
    this.placed.clear()
  }
}
