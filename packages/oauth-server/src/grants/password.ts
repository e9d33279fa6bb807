/**
 * grant_type=password (RFC 6749 4.3). Legacy: the client sees the password. GitLab allows it
 * without client authentication; users with two-factor authentication are refused with the
 * generic error before their password is checked (they use personal access tokens). Failures
 * are throttled per account and per IP. No refresh token.
 */
import { checkPassword, completeSignIn } from '../credentials.ts'
import { resolveScopes, SCOPES } from '../domain/scopes.ts'
import { InvalidGrant, InvalidScope, TemporarilyUnavailable } from '../errors.ts'
import { bindingOf, issueTokens, newGrantId } from './issue.ts'
import { type GrantHandler, INVALID_GRANT_MESSAGE, requireParam } from './types.ts'

export const passwordGrant: GrantHandler = {
  parameters: ['username', 'password', 'scope'],
  clientRequired: false,

  async handle(services, { params, client, ip, dpopJkt }) {
    const username = requireParam(params, 'username')
    const password = requireParam(params, 'password')
    // check the scope first: a malformed request costs no password verification
    const scope = resolveScopes(params.scope, client ? client.scopes : SCOPES)
    if (!scope.ok) throw new InvalidScope(scope.reason)
    // GitLab's find_by_login (a username or an email address); its find_with_user_password finds
    // no blocked user, and a user with two-factor authentication is refused: the generic answer,
    // which confirms nothing
    const check = await checkPassword(services, { login: username, password, ip, twoFactor: 'refuse' })
    if (check.outcome === 'throttled') {
      throw new TemporarilyUnavailable('Too many failed sign-in attempts. Retry later.', check.wait)
    }
    if (check.outcome !== 'accepted') throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    await completeSignIn(services, check.user, ip, 'password grant')
    return issueTokens(services.db, {
      applicationId: client?.id ?? null,
      userId: check.user.id,
      scopes: scope.scopes,
      grantId: newGrantId(),
      refresh: false,
      binding: bindingOf(dpopJkt, client),
    })
  },
}
