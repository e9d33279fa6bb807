import { HOTP, Secret, TOTP } from 'otpauth'
import { safeEqual } from './secrets.ts'

/** RFC 6238 TOTP: HMAC-SHA1, 30-second steps, 6 digits (what authenticator apps expect). */
const STEP_SECONDS = 30
const DIGITS = 6
const ALGORITHM = 'SHA1'

export function generateTotpSecret(): string {
  return new Secret({ size: 20 }).base32
}

/** RFC 4648 base32 without padding (otpauth's, as authenticator apps read it). */
export function base32Encode(bytes: Buffer): string {
  return new Secret({ buffer: Uint8Array.from(bytes).buffer }).base32
}

export function base32Decode(text: string): Buffer {
  return Buffer.from(Secret.fromBase32(text.replace(/=+$/, '')).bytes)
}

/** RFC 4226 HOTP value for one counter. */
export function hotp(secret: Buffer, counter: number): string {
  return HOTP.generate({
    secret: new Secret({ buffer: Uint8Array.from(secret).buffer }),
    algorithm: ALGORITHM,
    digits: DIGITS,
    counter,
  })
}

export const timeStep = (atMs: number): number => Math.floor(atMs / 1000 / STEP_SECONDS)

export function totp(secretBase32: string, atMs: number = Date.now()): string {
  return hotp(base32Decode(secretBase32), timeStep(atMs))
}

/**
 * The time step a code matches (current, previous or next step for clock drift), or
 * undefined. Steps at or before `lastStep` are refused: a code is good once (otpauth's
 * `TOTP.validate` knows no used step, so the window is walked here with its HOTP).
 */
export function verifyTotp(
  secretBase32: string,
  code: string,
  lastStep: number | null,
  atMs: number = Date.now(),
): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined
  const secret = base32Decode(secretBase32)
  const now = timeStep(atMs)
  let matched: number | undefined
  for (const step of [now - 1, now, now + 1]) {
    if (lastStep !== null && step <= lastStep) continue
    if (safeEqual(hotp(secret, step), code) && matched === undefined) matched = step
  }
  return matched
}

export function otpauthUri(secret: string, account: string, issuer: string): string {
  return new TOTP({
    issuer,
    label: account,
    secret: Secret.fromBase32(secret),
    algorithm: ALGORITHM,
    digits: DIGITS,
    period: STEP_SECONDS,
  }).toString()
}
