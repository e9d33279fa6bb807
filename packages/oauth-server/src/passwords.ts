import argon2 from 'argon2'

/** The argon2id cost of new hashes (a stored hash carries its own: verification reads it there). */
export interface PasswordHashCost {
  /** KiB of memory */
  memoryCost: number
  /** passes over it */
  timeCost: number
  parallelism: number
}

/** The library defaults: m=64 MiB, t=3, p=4. */
export const PASSWORD_HASH_COST: PasswordHashCost = { memoryCost: 65_536, timeCost: 3, parallelism: 4 }

let cost = PASSWORD_HASH_COST
let dummy: Promise<string> | undefined

/**
 * Sets the cost of the hashes this process makes from now on. The test suite lowers it (still
 * argon2id, hashed and verified by the same code): at the default cost each of its hundreds of
 * users and wrong passwords would spend a tenth of a second of both cores.
 */
export function setPasswordHashCost(next: PasswordHashCost): void {
  cost = next
  dummy = undefined
}

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id, ...cost })
}

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
