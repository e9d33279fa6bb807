import { createHash, randomBytes } from 'node:crypto'

/** Recognizable by secret scanners; the rest is 256 random bits. */
export const API_KEY_PREFIX = 'edk_'
const KEY_SHAPE = /^edk_[A-Za-z0-9_-]{43}$/

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url')
}

/** The only form a key is stored in. Random 256-bit keys need no slow hash. */
export function digestApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest()
}

/** A key that cannot be one of ours is refused before any lookup. */
export function looksLikeApiKey(value: string): boolean {
  return KEY_SHAPE.test(value)
}

/** The first characters shown in listings, so a person can tell keys apart. */
export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 6)
}

const PATTERN = /^(\*|\/[A-Za-z0-9_./{}-]*\*?)$/

/** `*`, an exact path (`/data/pv`) or a path prefix ending in `*` (`/data/*`). */
export function isEndpointPattern(pattern: string): boolean {
  return PATTERN.test(pattern)
}

/** Whether a request path is covered by one of the key's patterns. */
export function endpointAllowed(patterns: readonly string[], path: string): boolean {
  for (const pattern of patterns) {
    if (pattern === '*') return true
    if (pattern.endsWith('*')) {
      if (path.startsWith(pattern.slice(0, -1))) return true
    } else if (path === pattern) {
      return true
    }
  }
  return false
}

/** The scope of an OAuth access token (client credentials, for a gateway) that may write measurements. */
export const WRITE_ENERGY = 'write_energy'

/** The path prefix of every write: a key may write only through a pattern that names it. */
export const WRITE_PATH_PREFIX = '/ingest/'

/**
 * Whether a key may write at `path`: only through a pattern under `/ingest/` that covers it. `*`,
 * `/data/*` and every other pattern grant reads only, so no key made for reading ever writes.
 */
export function writeAllowed(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => p.startsWith(WRITE_PATH_PREFIX) && endpointAllowed([p], path))
}

/** The path prefix of the alert rules: a key may change them only through a pattern that names it. */
export const MANAGE_PATH_PREFIX = '/alerts/'

/** Whether a key may change alert rules at `path`: only through a pattern under `/alerts/` that covers it (as writes). */
export function manageAllowed(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => p.startsWith(MANAGE_PATH_PREFIX) && endpointAllowed([p], path))
}
