/**
 * grant_type=password (RFC 6749 4.3). Legacy: the client sees the password. GitLab allows it
 * without client authentication; users with two-factor authentication are refused with the
 * generic error before their password is checked (they use personal access tokens). Failures
 * are throttled per account and per IP. No refresh token.
 */
import { resolveScopes, SCOPES } from '../domain/scopes.ts'
import { InvalidGrant, InvalidScope, TemporarilyUnavailable } from '../errors.ts'
import { verifyPassword } from '../passwords.ts'
import { findUserByLogin, recordSignIn } from '../repositories/users.ts'
import { throttleAccount } from '../throttle.ts'
import { issueTokens, newGrantId } from './issue.ts'
import { type GrantHandler, INVALID_GRANT_MESSAGE, requireParam } from './types.ts'

export const passwordGrant: GrantHandler = {
  parameters: ['username', 'password', 'scope'],
  clientRequired: false,

  async handle({ db, throttle }, { params, client, ip }) {
    const username = requireParam(params, 'username')
    const password = requireParam(params, 'password')
    // check the scope first: a malformed request costs no password verification
    const scope = resolveScopes(params.scope, client ? client.scopes : SCOPES)
    if (!scope.ok) throw new InvalidScope(scope.reason)
    // GitLab's find_by_login: a username or an email address
    const user = await findUserByLogin(db, username)
    const account = throttleAccount(user, username)
    const wait = await throttle.blocked(account, ip)
    if (wait !== undefined) throw new TemporarilyUnavailable('Too many failed sign-in attempts. Retry later.', wait)
    if (user?.otp_secret) {
      // GitLab refuses a user with two-factor authentication before looking at the password, so
      // the answer confirms nothing; the verification against no hash keeps the time the same.
      // Nothing was tried, so nothing is counted.
      await verifyPassword(undefined, password)
      throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    }
    if (!(await verifyPassword(user?.password_hash, password)) || !user) {
      await throttle.failed(account, ip)
      throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    }
    await throttle.succeeded(account)
    // GitLab's find_with_user_password finds no blocked user: the generic answer, which does not
    // confirm the password either
    if (user.locked) throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    await recordSignIn(db, user.id)
    return issueTokens(db, {
      applicationId: client?.id ?? null,
      userId: user.id,
      scopes: scope.scopes,
      grantId: newGrantId(),
      refresh: false,
    })
  },
}
