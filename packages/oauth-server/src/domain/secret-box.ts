import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/**
 * Secrets the server must read back (TOTP seeds) are sealed with AES-256-GCM under the
 * server's key, so a database dump alone does not yield them. Format: `v1.` + base64url of
 * iv (12 bytes) | tag (16 bytes) | ciphertext. `purpose` is bound as associated data.
 */
export function sealSecret(key: Buffer, plaintext: string, purpose: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(purpose))
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`
}

/** The plaintext; throws when the key is not the one that sealed it or the value was altered. */
export function openSecret(key: Buffer, sealed: string, purpose: string): string {
  if (!sealed.startsWith('v1.')) throw new Error('unknown sealed secret format')
  const raw = Buffer.from(sealed.slice(3), 'base64url')
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12))
  decipher.setAAD(Buffer.from(purpose))
  decipher.setAuthTag(raw.subarray(12, 28))
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
}

export const OTP_PURPOSE = 'users.otp_secret'
