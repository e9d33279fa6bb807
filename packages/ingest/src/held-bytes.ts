/**
 * The payload bytes handed to the writer and not yet acknowledged, over every connection to the
 * broker (a message handed on before a reconnection is still held by the writer): a broker's
 * in-flight limit bounds messages, this bounds their bytes - a thousand packs of a megabyte each
 * would not fit the process. The MQTT session stops reading its socket while it is full and reads
 * again when acknowledgements free room; an HTTP pack is counted from its headers (before its body
 * is read) and refused while it is full.
 */
export class HeldBytes {
  private held = 0
  readonly limit: number
  private readonly waiting = new Set<() => void>()

  constructor(limit: number) {
    this.limit = limit
  }

  /** Counts a payload handed on; returns its release (once, whenever it is called). */
  take(bytes: number): () => void {
    this.held += bytes
    let released = false
    return () => {
      if (released) return
      released = true
      this.held -= bytes
      if (!this.full()) for (const resume of this.waiting) resume()
    }
  }

  /** Bytes counted now (ingest_held_bytes). */
  bytes(): number {
    return this.held
  }

  full(): boolean {
    return this.held >= this.limit
  }

  /** Runs `resume` whenever room is freed, until the returned function is called. */
  onRoom(resume: () => void): () => void {
    this.waiting.add(resume)
    return () => this.waiting.delete(resume)
  }
}

/**
 * The HTTP packs' part of the bound: half of it for HTTP alone, so that senders sending slowly (for
 * up to the request timeout) never stop the broker's stream, and a quarter for one credential, so
 * that one gateway never holds up the others.
 */
export class HttpShares {
  private readonly bound: HeldBytes
  private readonly http: HeldBytes
  private readonly perCredential = new Map<string, HeldBytes>()

  constructor(bound: HeldBytes) {
    this.bound = bound
    this.http = new HeldBytes(Math.max(1, Math.floor(bound.limit / 2)))
  }

  /** Counts a pack of `credential`: its release (once, whenever called), or undefined when a share is full. */
  take(credential: string, bytes: number): (() => void) | undefined {
    let own = this.perCredential.get(credential)
    if (this.bound.full() || this.http.full() || own?.full()) return undefined
    if (!own) {
      own = new HeldBytes(Math.max(1, Math.floor(this.bound.limit / 4)))
      this.perCredential.set(credential, own)
    }
    const mine = own
    const releases = [this.bound.take(bytes), this.http.take(bytes), mine.take(bytes)]
    return () => {
      for (const release of releases) release()
      if (mine.bytes() === 0 && this.perCredential.get(credential) === mine) this.perCredential.delete(credential)
    }
  }
}
