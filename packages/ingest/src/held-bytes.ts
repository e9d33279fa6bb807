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
