/**
 * Short-lived in-process caches of the hot lookups (access tokens by digest, clients by id), so
 * steady API and introspection traffic skips the database.
 *
 * Everything this instance revokes or changes (revocation, rotation, code replay, profile
 * writes) clears the token cache at once. A change made by another instance takes effect here
 * within `ttlSeconds` (RFC 7009 2.2 allows revocation some propagation time); 0 turns caching off.
 */
export class TtlCache<T> {
  readonly #entries = new Map<string, { value: T; staleAt: number }>()
  readonly #ttlMs: number
  readonly #maxEntries: number

  constructor(ttlSeconds: number, maxEntries = 10_000) {
    this.#ttlMs = ttlSeconds * 1000
    this.#maxEntries = maxEntries
  }

  get(key: string): T | undefined {
    const entry = this.#entries.get(key)
    if (!entry) return undefined
    if (entry.staleAt <= Date.now()) {
      this.#entries.delete(key)
      return undefined
    }
    return entry.value
  }

  set(key: string, value: T): void {
    if (this.#ttlMs <= 0) return
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
