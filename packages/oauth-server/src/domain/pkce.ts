import { createHash } from 'node:crypto'
import { safeEqual } from './secrets.ts'

/** RFC 7636 4.1/4.2: 43-128 characters of [A-Z a-z 0-9 - . _ ~]. */
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/

export const isValidCodeChallenge = (value: string): boolean => PKCE_VALUE.test(value)
export const isValidCodeVerifier = (value: string): boolean => PKCE_VALUE.test(value)

/** RFC 7636 4.2: BASE64URL(SHA256(ASCII(code_verifier))). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url')
}

/** Whether a verifier answers a stored challenge (RFC 7636 4.6), compared in constant time. */
export function verifierMatches(verifier: string, challenge: string, method: string): boolean {
  if (!isValidCodeVerifier(verifier)) return false
  const computed = method === 'S256' ? s256(verifier) : verifier
  return safeEqual(computed, challenge)
}
