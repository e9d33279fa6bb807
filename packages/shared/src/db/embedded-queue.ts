import type { PGlite } from '@electric-sql/pglite'

const READY_FOR_QUERY = 0x5a // 'Z'
const IDLE = 0x49 // 'I'
const TERMINATE = 0x58 // 'X'

type Waiter = { id: number; resolve: () => void }

/**
 * Serialises client connections onto the single PGlite backend at transaction granularity.
 *
 * A connection takes the backend with its first message and keeps it until the backend
 * reports ReadyForQuery/idle, so extended-protocol sequences (Parse/Bind/Execute/Sync),
 * explicit transactions and cursors are never interleaved with another client's messages.
 * It has the shape pglite-socket's handler expects of its query queue.
 */
export class TransactionQueue {
  private holder: number | null = null
  private readonly waiters: Waiter[] = []
  private readonly db: PGlite

  constructor(db: PGlite) {
    this.db = db
  }

  private acquire(id: number): Promise<void> {
    if (this.holder === id) return Promise.resolve()
    if (this.holder === null) {
      this.holder = id
      return Promise.resolve()
    }
    return new Promise((resolve) => this.waiters.push({ id, resolve }))
  }

  private release(id: number): void {
    if (this.holder !== id) return
    const next = this.waiters.shift()
    this.holder = next ? next.id : null
    next?.resolve()
  }

  async enqueue(id: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    await this.acquire(id)
    let bytes = 0
    let tail: Uint8Array = new Uint8Array(0)
    try {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(message, {
          onRawData: (chunk: Uint8Array) => {
            bytes += chunk.length
            tail = lastBytes(tail, chunk, 6)
            onData(chunk)
          },
        }),
      )
    } catch (error) {
      this.release(id)
      throw error
    }
    const idle = tail.length === 6 && tail[0] === READY_FOR_QUERY && tail[5] === IDLE
    if (idle || message[0] === TERMINATE) this.release(id)
    return bytes
  }

  getQueueLength(): number {
    return this.waiters.length
  }

  clearQueueForHandler(id: number): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i]?.id === id) this.waiters.splice(i, 1)
    }
  }

  /** A client that vanished mid-transaction must not leave the backend locked or its writes pending. */
  async clearTransactionIfNeeded(id: number): Promise<void> {
    if (this.holder !== id) return
    try {
      await this.db.exec('ROLLBACK')
    } catch {
      // no transaction was open
    }
    this.release(id)
  }
}

function lastBytes(previous: Uint8Array, chunk: Uint8Array, n: number): Uint8Array {
  if (chunk.length >= n) return chunk.slice(chunk.length - n)
  const joined = new Uint8Array(previous.length + chunk.length)
  joined.set(previous)
  joined.set(chunk, previous.length)
  return joined.slice(Math.max(0, joined.length - n))
}
