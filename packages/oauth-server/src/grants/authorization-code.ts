/** grant_type=authorization_code (RFC 6749 4.1.3, RFC 7636 4.5-4.6, RFC 9700 2.1.1 and 4.5). */
import { isValidCodeVerifier, verifierMatches } from '../domain/pkce.ts'
import { digest } from '../domain/secrets.ts'
import { InvalidGrant, InvalidRequest } from '../errors.ts'
import { consumeAuthorizationCode, findAuthorizationCode } from '../repositories/codes.ts'
import { revokeGrant } from '../repositories/tokens.ts'
import { issueTokens } from './issue.ts'
import { type GrantHandler, INVALID_GRANT_MESSAGE, requireParam } from './types.ts'

export const authorizationCodeGrant: GrantHandler = {
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  clientRequired: true,

  async handle({ db, tokenCache }, { params, client }) {
    const code = requireParam(params, 'code')
    const redirectUri = requireParam(params, 'redirect_uri')
    const verifier = params.code_verifier
    if (verifier !== undefined && !isValidCodeVerifier(verifier)) {
      throw new InvalidRequest('code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~].')
    }
    const row = await findAuthorizationCode(db, digest(code))
    if (!row || row.application_id !== client?.id) throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    if (row.consumed_at) {
      // a second redemption means the code leaked: nothing issued from it stays valid
      await revokeGrant(db, row.grant_id)
      tokenCache.clear()
      throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    }
    if (row.expired || row.redirect_uri !== redirectUri) throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    if (row.code_challenge) {
      if (verifier === undefined) throw new InvalidGrant('PKCE verification failed: code_verifier is required.')
      if (!verifierMatches(verifier, row.code_challenge, row.code_challenge_method ?? 'S256')) {
        throw new InvalidGrant('PKCE verification failed.')
      }
    } else if (verifier !== undefined) {
      // downgrade defence: a verifier for a code requested without a challenge
      throw new InvalidGrant('PKCE verification failed: the authorization request had no code_challenge.')
    }
    const result = await db.transaction().execute(async (trx) => {
      if (!(await consumeAuthorizationCode(trx, row.id))) return undefined
      return issueTokens(trx, {
        applicationId: client.id,
        userId: row.user_id,
        scopes: row.scopes,
        grantId: row.grant_id,
        refresh: client.grant_types.includes('refresh_token'),
      })
    })
    if (!result) {
      // lost a concurrent redemption: the winner has committed, so its tokens are revoked too
      await revokeGrant(db, row.grant_id)
      tokenCache.clear()
      throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    }
    return result
  },
}
