/** grant_type=refresh_token (RFC 6749 6) with rotation and reuse detection (RFC 9700 4.14.2). */
import { parseScope, within } from '../domain/scopes.ts'
import { digest } from '../domain/secrets.ts'
import { InvalidGrant, InvalidScope } from '../errors.ts'
import { findRefreshToken, revokeAccessToken, revokeGrant, rotateRefreshToken } from '../repositories/tokens.ts'
import { findUserById } from '../repositories/users.ts'
import { idTokenFor } from './authorization-code.ts'
import { bindingOf, issueTokens } from './issue.ts'
import { type GrantHandler, type GrantServices, INVALID_GRANT_MESSAGE, requireParam } from './types.ts'

export const refreshTokenGrant: GrantHandler = {
  parameters: ['refresh_token', 'scope'],
  clientRequired: true,

  async handle(context, { params, client, dpopJkt }) {
    const { db } = context
    const presented = requireParam(params, 'refresh_token')
    const token = await findRefreshToken(db, digest(presented))
    if (!token || token.revoked_at || token.application_id !== (client?.id ?? null)) {
      throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    }
    if (token.rotated_at) {
      // reuse of a rotated token: someone else holds this family; end it
      await endFamily(context, token.grant_id)
      throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    }
    // RFC 9449 5: a refresh token bound to a key is used only with a proof of that key
    if (token.dpop_jkt !== null && token.dpop_jkt !== dpopJkt) {
      throw new InvalidGrant('The refresh token is bound to a DPoP key: send a DPoP proof of that key.')
    }
    // a locked account gets no new tokens (its existing ones are refused by the API)
    const owner = await findUserById(db, token.user_id)
    if (!owner || owner.locked) throw new InvalidGrant('The account is locked.')
    let scopes = token.scopes
    if (params.scope !== undefined) {
      const asked = parseScope(params.scope)
      if (asked.length === 0 || !within(asked, token.scopes)) {
        throw new InvalidScope('The requested scope exceeds the scope granted by the resource owner.')
      }
      scopes = asked
    }
    const result = await context.changes.commit(async (trx) => {
      if (!(await rotateRefreshToken(trx, token.id))) return undefined
      await revokeAccessToken(trx, token.access_token_id)
      return issueTokens(trx, {
        applicationId: token.application_id,
        userId: token.user_id,
        scopes,
        grantId: token.grant_id,
        refresh: true,
        binding: bindingOf(dpopJkt, client, token.dpop_jkt),
      })
    })
    if (!result) {
      // lost a concurrent rotation: the same token presented twice is reuse (RFC 9700 4.14.2)
      await endFamily(context, token.grant_id)
      throw new InvalidGrant(INVALID_GRANT_MESSAGE)
    }
    if (!scopes.includes('openid') || !client) return result
    // OpenID Connect Core 12.2: a fresh id_token for the same user
    return {
      ...result,
      id_token: await idTokenFor(context, client, { userId: token.user_id, scopes, nonce: null, authTime: null }),
    }
  },
}

/** A rotated refresh token came back: someone else holds the family, which ends (RFC 9700 4.14.2). */
async function endFamily(context: Pick<GrantServices, 'changes' | 'audit'>, grantId: string): Promise<void> {
  await context.changes.commit((trx) => revokeGrant(trx, grantId))
  await context.audit.record({
    event: 'oauth_grant_revoked_on_replay',
    author: 'anonymous',
    message: 'A rotated refresh token was presented again: its whole grant was revoked',
  })
}
