/**
 * Short-lived in-process caches of the hot lookups (access tokens as presented, clients by id), so
 * steady API and introspection traffic skips the database.
 *
 * Every revocation, rotation, code replay and profile write clears the caches of this instance
 * at once and, through `cache-invalidation.ts`, those of every other instance on commit.
 * `ttlSeconds` bounds how long an entry lives regardless; 0 turns caching off.
 */
export class TtlCache<T> {
  readonly #entries = new Map<string, { value: T; staleAt: number }>()
  readonly #ttlMs: number
  readonly #maxEntries: number
  #enabled = true

  constructor(ttlSeconds: number, maxEntries = 10_000) {
    this.#ttlMs = ttlSeconds * 1000
    this.#maxEntries = maxEntries
  }

  /** Stops caching (and forgets everything) until `enable()`: used while changes elsewhere cannot be heard. */
  disable(): void {
    this.#enabled = false
    this.#entries.clear()
  }

  enable(): void {
    this.#entries.clear()
    this.#enabled = true
  }

  get(key: string): T | undefined {
    if (!this.#enabled) return undefined
    const entry = this.#entries.get(key)
    if (!entry) return undefined
    if (entry.staleAt <= Date.now()) {
      this.#entries.delete(key)
      return undefined
    }
    return entry.value
  }

  set(key: string, value: T): void {
    if (this.#ttlMs <= 0 || !this.#enabled) return
    if (this.#entries.size >= this.#maxEntries) {
      // drop the oldest insertion; a Map keeps insertion order
      const oldest = this.#entries.keys().next().value
      if (oldest !== undefined) this.#entries.delete(oldest)
    }
    this.#entries.set(key, { value, staleAt: Date.now() + this.#ttlMs })
  }

  clear(): void {
    this.#entries.clear()
  }
}
