/**
 * A short-lived in-process cache of access-token lookups, keyed by the token's digest, so the
 * hot path of every API call skips the database while a token is in use.
 *
 * Everything this instance revokes or changes (revocation, rotation, code replay, profile
 * writes) clears the cache at once. A revocation made by another instance takes effect here
 * within `ttlSeconds` (RFC 7009 2.2 allows propagation time); 0 turns the cache off.
 */
import type { BearerTokenRow } from './repositories/tokens.ts'

interface Entry {
  row: BearerTokenRow
  /** when the entry must be looked up again (ms) */
  staleAt: number
  /** when the token itself expires, by the database clock at lookup time (ms) */
  expiresAt: number
}

export class TokenCache {
  readonly #entries = new Map<string, Entry>()
  readonly #ttlMs: number
  readonly #maxEntries: number

  constructor(ttlSeconds: number, maxEntries = 10_000) {
    this.#ttlMs = ttlSeconds * 1000
    this.#maxEntries = maxEntries
  }

  get(key: string): { row: BearerTokenRow; expiresIn: number } | undefined {
    const entry = this.#entries.get(key)
    if (!entry) return undefined
    const now = Date.now()
    if (entry.staleAt <= now) {
      this.#entries.delete(key)
      return undefined
    }
    return { row: entry.row, expiresIn: Math.floor((entry.expiresAt - now) / 1000) }
  }

  set(key: string, row: BearerTokenRow): void {
    if (this.#ttlMs <= 0) return
    if (this.#entries.size >= this.#maxEntries) {
      // drop the oldest insertion; Map keeps insertion order
      const oldest = this.#entries.keys().next().value
      if (oldest !== undefined) this.#entries.delete(oldest)
    }
    const now = Date.now()
    this.#entries.set(key, { row, staleAt: now + this.#ttlMs, expiresAt: now + row.expires_in * 1000 })
  }

  clear(): void {
    this.#entries.clear()
  }
}
