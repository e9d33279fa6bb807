import { describe, expect, it } from 'vitest'
import {
  digestApiKey,
  endpointAllowed,
  generateApiKey,
  isEndpointPattern,
  looksLikeApiKey,
} from '../../src/domain/api-keys.ts'

describe('API keys', () => {
  it('are prefixed, 256-bit random, and digested to 32 bytes', () => {
    const a = generateApiKey()
    const b = generateApiKey()
    expect(a).toMatch(/^edk_[A-Za-z0-9_-]{43}$/)
    expect(a).not.toBe(b)
    expect(looksLikeApiKey(a)).toBe(true)
    expect(looksLikeApiKey(`${a}x`)).toBe(false)
    expect(digestApiKey(a)).toHaveLength(32)
    expect(digestApiKey(a).equals(digestApiKey(a))).toBe(true)
  })

  it('endpoint patterns: everything, a prefix, or one exact path', () => {
    expect(endpointAllowed(['*'], '/metadata/dataloggers/')).toBe(true)
    expect(endpointAllowed(['/data/*'], '/data/pv')).toBe(true)
    expect(endpointAllowed(['/data/*'], '/metadata/meters/')).toBe(false)
    expect(endpointAllowed(['/metadata/meters/*'], '/metadata/meters/860')).toBe(true)
    expect(endpointAllowed(['/metadata/meters/*'], '/metadata/meters')).toBe(false)
    expect(endpointAllowed(['/data/pv'], '/data/pv')).toBe(true)
    expect(endpointAllowed(['/data/pv'], '/data/pvx')).toBe(false)
    expect(endpointAllowed([], '/data/pv')).toBe(false)
  })

  it('accepts only well-formed patterns', () => {
    for (const p of ['*', '/data/*', '/data/pv', '/metadata/meters/*']) expect(isEndpointPattern(p), p).toBe(true)
    for (const p of ['data/*', '', '/data/*/x', '/da ta', '**']) expect(isEndpointPattern(p), p).toBe(false)
  })
})
