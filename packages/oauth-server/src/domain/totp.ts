import { createHmac, randomBytes } from 'node:crypto'
import { safeEqual } from './secrets.ts'

/** RFC 6238 TOTP: HMAC-SHA1, 30-second steps, 6 digits (what authenticator apps expect). */
const STEP_SECONDS = 30
const DIGITS = 6
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

export function generateTotpSecret(): string {
  return base32Encode(randomBytes(20))
}

export function base32Encode(bytes: Buffer): string {
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31]
  return out
}

export function base32Decode(text: string): Buffer {
  const clean = text.replace(/=+$/, '').toUpperCase()
  let bits = 0
  let value = 0
  const out: number[] = []
  for (const char of clean) {
    const index = ALPHABET.indexOf(char)
    if (index < 0) throw new Error('invalid base32')
    value = (value << 5) | index
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** RFC 4226 HOTP value for one counter. */
export function hotp(secret: Buffer, counter: number): string {
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac('sha1', secret).update(message).digest()
  const offset = (mac[mac.length - 1] as number) & 0x0f
  const binary = mac.readUInt32BE(offset) & 0x7fffffff
  return String(binary % 10 ** DIGITS).padStart(DIGITS, '0')
}

export const timeStep = (atMs: number): number => Math.floor(atMs / 1000 / STEP_SECONDS)

export function totp(secretBase32: string, atMs: number = Date.now()): string {
  return hotp(base32Decode(secretBase32), timeStep(atMs))
}

/**
 * The time step a code matches (current, previous or next step for clock drift), or
 * undefined. Steps at or before `lastStep` are refused: a code is good once.
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
  const label = encodeURIComponent(`${issuer}:${account}`)
  return `otpauth://totp/${label}?secret=${secret}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=6&period=30`
}
