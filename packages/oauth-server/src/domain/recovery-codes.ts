import { randomBytes } from 'node:crypto'
import { digest } from './secrets.ts'
import { base32Encode } from './totp.ts'

/** How many single-use recovery codes enabling 2FA hands out (GitLab's number). */
export const RECOVERY_CODE_COUNT = 10

/** Ten random 80-bit codes, written `abcd-efgh-ijkl-mnop` so a person can copy them by hand. */
export function generateRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () =>
    base32Encode(randomBytes(10))
      .toLowerCase()
      .replace(/(.{4})(?!$)/g, '$1-'),
  )
}

/** The form in which a typed code is compared: case, spaces and dashes do not matter. */
export function normalizeRecoveryCode(text: string): string {
  return text.toLowerCase().replace(/[\s-]/g, '')
}

export const recoveryCodeDigest = (code: string): Buffer => digest(normalizeRecoveryCode(code))

/** A recovery code rather than a six-digit TOTP code. */
export const looksLikeRecoveryCode = (text: string): boolean => /^[a-z2-7]{16}$/.test(normalizeRecoveryCode(text))
