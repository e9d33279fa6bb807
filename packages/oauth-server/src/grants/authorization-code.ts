/** grant_type=authorization_code (RFC 6749 4.1.3, RFC 7636 4.5-4.6, RFC 9700 2.1.1 and 4.5). */
import { applicationTarget } from '../audit.ts'
import type { Application } from '../db/schema.ts'
import { isValidCodeVerifier, s256 } from '../domain/pkce.ts'
import { digest } from '../domain/secrets.ts'
import { InvalidGrant, InvalidRequest } from '../errors.ts'
import { type CodeAttempt, checkAuthorizationCode } from '../repositories/codes.ts'
import { revokeGrant } from '../repositories/tokens.ts'
import { findUserById } from '../repositories/users.ts'
import { bindingOf, redeemCode } from './issue.ts'
import { type GrantHandler, type GrantServices, INVALID_GRANT_MESSAGE, requireParam } from './types.ts'

export const authorizationCodeGrant: GrantHandler = {
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  clientRequired: true,

  async handle(services, { params, client, dpopJkt }) {
    const code = requireParam(params, 'code')
    const redirectUri = requireParam(params, 'redirect_uri')
    const verifier = params.code_verifier
    if (verifier !== undefined && !isValidCodeVerifier(verifier)) {
      throw new InvalidRequest('code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~].')
    }
    const application = client as Application
    const attempt: CodeAttempt = {
      digest: digest(code),
      applicationId: application.id,
      redirectUri,
      verifier: verifier ?? null,
      verifierS256: verifier === undefined ? null : s256(verifier),
      dpopJkt: dpopJkt ?? null,
    }
    // the common case in one round trip: every binding rule is checked by the update itself
    const redeemed = await redeemCode(
      services.db,
      attempt,
      application.grant_types.includes('refresh_token'),
      bindingOf(dpopJkt, application),
    )
    if (redeemed) {
      const { response, code: grant } = redeemed
      if (!grant.scopes.includes('openid')) return response
      return { ...response, id_token: await idTokenFor(services, application, grant) }
    }
    throw await whyNotRedeemed(services, attempt, application)
  },
}

/** OpenID Connect Core 3.1.3.3: the id_token of a code redeemed with the openid scope. */
export async function idTokenFor(
  services: Pick<GrantServices, 'db' | 'settings' | 'openid'>,
  client: Application,
  grant: { userId: number; scopes: string[]; nonce: string | null; authTime: Date | null },
): Promise<string> {
  const user = await findUserById(services.db, grant.userId)
  if (!user) throw new InvalidGrant(INVALID_GRANT_MESSAGE)
  return services.openid.idToken({
    issuer: services.settings.issuer,
    clientId: client.uid,
    user,
    scopes: grant.scopes,
    nonce: grant.nonce,
    authTime: grant.authTime,
  })
}

/** The error for a code that did not redeem, from the rule that refused it; a used code is a replay and ends its grant. */
async function whyNotRedeemed(
  services: Pick<GrantServices, 'db' | 'changes' | 'audit'>,
  attempt: CodeAttempt,
  client: Application,
): Promise<InvalidGrant> {
  const check = await checkAuthorizationCode(services.db, attempt)
  if (!check?.rules.client) return new InvalidGrant(INVALID_GRANT_MESSAGE)
  const { rules } = check
  if (!rules.unused) {
    // a second redemption (or the loser of a concurrent one) means the code leaked:
    // nothing issued from it stays valid
    await services.changes.commit((trx) => revokeGrant(trx, check.grantId))
    await services.audit.record({
      event: 'oauth_grant_revoked_on_replay',
      author: { client: { uid: client.uid, name: client.name } },
      target: applicationTarget(client),
      message: 'An authorization code was redeemed again: every token issued from it was revoked',
    })
    return new InvalidGrant(INVALID_GRANT_MESSAGE)
  }
  if (!rules.live || !rules.redirect_uri) return new InvalidGrant(INVALID_GRANT_MESSAGE)
  if (!rules.verifier_sent) return new InvalidGrant('PKCE verification failed: code_verifier is required.')
  if (!rules.verifier_matches) return new InvalidGrant('PKCE verification failed.')
  if (!rules.challenge_made) {
    return new InvalidGrant('PKCE verification failed: the authorization request had no code_challenge.')
  }
  if (!rules.dpop_key) {
    return new InvalidGrant('The code was requested for another DPoP key (dpop_jkt): send a DPoP proof of that key.')
  }
  return new InvalidGrant(INVALID_GRANT_MESSAGE)
}
