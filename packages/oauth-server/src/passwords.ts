import argon2 from 'argon2'

/** argon2id with the library defaults (m=64 MiB, t=3, p=4). */
export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id })
}

let dummy: Promise<string> | undefined

/**
 * Verifies a password; with no stored hash (unknown user) it still spends the time of a
 * verification, so response times do not tell which usernames exist.
 */
export async function verifyPassword(hash: string | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummy ??= hashPassword('not a password of anyone')
    await argon2.verify(await dummy, password).catch(() => false)
    return false
  }
  return argon2.verify(hash, password).catch(() => false)
}
