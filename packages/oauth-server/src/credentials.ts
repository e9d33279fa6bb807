/**
 * Checking who someone is, in one place for the sign-in pages, the password grant and the pages
 * that ask for a secret again: every attempt is counted per account and per client address
 * before it is checked (atomically, so a burst of simultaneous guesses gets no more checks than
 * the limit) and given back when it was right; an unknown login costs the time of a real
 * verification; the account's counter is cleared only when a sign-in completes (after the
 * second factor, if the account has one), so the right password alone never buys more guesses
 * at the code.
 */

import type { AuditEventName } from './audit.ts'
import type { User } from './db/schema.ts'
import { looksLikeRecoveryCode, recoveryCodeDigest } from './domain/recovery-codes.ts'
import { OTP_PURPOSE, openSecret } from './domain/secret-box.ts'
import { verifyTotp } from './domain/totp.ts'
import type { OAuthServices } from './oauth-app.ts'
import { verifyPassword } from './passwords.ts'
import { useRecoveryCode } from './repositories/recovery-codes.ts'
import { claimOtpStep, findUserByLogin, recordSignIn } from './repositories/users.ts'
import { throttleAccount } from './throttle.ts'

type Services = Pick<OAuthServices, 'db' | 'throttle' | 'audit'>

/** How a sign-in was made, for its audit event. */
export type SignInMethod =
  | 'password'
  | 'password and two-factor code'
  | 'password and passkey'
  | 'password grant'
  | 'sign-up'
  | 'passkey'

export type CredentialCheck =
  /** over the limit for the account or the address: retry in `wait` seconds */
  | { outcome: 'throttled'; wait: number }
  /** unknown login or wrong secret (counted), or an account this path does not serve */
  | { outcome: 'refused' }
  /** right password, blocked account */
  | { outcome: 'locked' }
  /** right password; the account has two-factor authentication: the code comes next */
  | { outcome: 'second_factor'; user: User }
  /** right credentials: `completeSignIn` when nothing else is asked */
  | { outcome: 'accepted'; user: User }

/**
 * The password step. `twoFactor: 'refuse'` (the password grant, as GitLab) refuses an account
 * with two-factor authentication without checking its password, with the answer and the count
 * of a wrong password, so neither tells that the account has a second factor.
 */
export async function checkPassword(
  services: Services,
  input: { login: string; password: string; ip: string; twoFactor: 'next-step' | 'refuse' },
): Promise<CredentialCheck> {
  const user = input.login ? await findUserByLogin(services.db, input.login) : undefined
  const account = throttleAccount(user, input.login)
  const wait = await services.throttle.attempt(account, input.ip)
  if (wait !== undefined) return { outcome: 'throttled', wait }
  if (input.twoFactor === 'refuse' && user?.otp_secret) {
    // a verification against no hash keeps the time the same
    await verifyPassword(undefined, input.password)
    return { outcome: 'refused' }
  }
  if (!(await verifyPassword(user?.password_hash, input.password)) || !user) {
    await signInFailed(services, user, input.ip, 'login_failed_with_standard_authentication', 'wrong password')
    return { outcome: 'refused' }
  }
  await services.throttle.refund(account, input.ip)
  if (user.locked) {
    await signInFailed(services, user, input.ip, 'login_failed_with_standard_authentication', 'blocked account')
    return { outcome: 'locked' }
  }
  if (user.otp_secret) return { outcome: 'second_factor', user }
  return { outcome: 'accepted', user }
}

/**
 * A failed sign-in's audit event: about the account when the login named one (its username, never
 * the login as typed: a mistyped password may stand there), else about nobody.
 */
async function signInFailed(
  services: Services,
  user: User | undefined,
  ip: string,
  event: AuditEventName,
  why: string,
): Promise<void> {
  await services.audit.record({
    event,
    author: user ? { user } : 'anonymous',
    entity: user,
    message: user ? `Failed to sign in: ${why}` : 'Failed to sign in: no such account',
    ip,
  })
}

/** A signed-in or half signed-in user proves something again: counted like a sign-in. */
async function checkOwnAccount(
  services: Services,
  user: User,
  ip: string,
  proves: () => Promise<boolean>,
): Promise<CredentialCheck> {
  const account = throttleAccount(user, user.username)
  const wait = await services.throttle.attempt(account, ip)
  if (wait !== undefined) return { outcome: 'throttled', wait }
  if (!(await proves())) return { outcome: 'refused' }
  await services.throttle.refund(account, ip)
  return { outcome: 'accepted', user }
}

/** The second step: a TOTP code (each time step once) or an unused recovery code (each once). */
export function checkSecondFactor(
  services: Services & Pick<OAuthServices, 'settings'>,
  user: User,
  attempt: string,
  ip: string,
): Promise<CredentialCheck> {
  return checkOwnAccount(services, user, ip, async () => {
    const right = await secondFactorRight(services, user, attempt)
    if (!right) await signInFailed(services, user, ip, 'login_failed_with_otp_authentication', 'wrong two-factor code')
    return right
  })
}

async function secondFactorRight(
  services: Services & Pick<OAuthServices, 'settings'>,
  user: User,
  attempt: string,
): Promise<boolean> {
  if (!user.otp_secret) return false
  if (looksLikeRecoveryCode(attempt)) return useRecoveryCode(services.db, user.id, recoveryCodeDigest(attempt))
  const seed = openSecret(services.settings.secretKey, user.otp_secret, OTP_PURPOSE)
  const step = verifyTotp(seed, attempt, user.otp_last_step)
  return step !== undefined && (await claimOtpStep(services.db, user.id, step))
}

/** A signed-in user's password asked again before a sensitive change (counted like a sign-in). */
export function confirmPassword(
  services: Services,
  user: User,
  password: string,
  ip: string,
): Promise<CredentialCheck> {
  return checkOwnAccount(services, user, ip, () => verifyPassword(user.password_hash, password))
}

/**
 * A passkey's assertion (WebAuthn): counted like a sign-in of its account and address, a failure
 * audited. `proves` verifies it (the signature, the challenge, the counter).
 */
export async function checkPasskey(
  services: Services,
  user: User,
  ip: string,
  proves: () => Promise<boolean>,
): Promise<CredentialCheck> {
  const check = await checkOwnAccount(services, user, ip, proves)
  if (check.outcome === 'refused') {
    await signInFailed(services, user, ip, 'login_failed_with_webauthn_authentication', 'passkey refused')
  }
  return check
}

/**
 * A user code typed on the device page: a short code a guesser could try by the thousand
 * (RFC 8628 5.1), so each miss is counted like a failed sign-in of the account and address.
 */
export function checkUserCode(
  services: Services,
  user: User,
  ip: string,
  found: () => Promise<boolean>,
): Promise<CredentialCheck> {
  return checkOwnAccount(services, user, ip, found)
}

/** The sign-in is complete: the account's failure counter starts over and the sign-in is recorded. */
export async function completeSignIn(services: Services, user: User, ip: string, method: SignInMethod): Promise<void> {
  await services.throttle.succeeded(throttleAccount(user, user.username))
  await recordSignIn(services.db, user.id)
  await services.audit.record({
    event: 'user_signed_in',
    author: { user },
    entity: user,
    message: `Signed in with ${method}`,
    ip,
  })
}
