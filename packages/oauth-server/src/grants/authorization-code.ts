/** grant_type=authorization_code (RFC 6749 4.1.3, RFC 7636 4.5-4.6, RFC 9700 2.1.1 and 4.5). */
import type { ServerContext } from '../context.ts'
import type { Application } from '../db/schema.ts'
import { ACCESS_TOKEN_TTL } from '../domain/lifetimes.ts'
import { isValidCodeVerifier, s256, verifierMatches } from '../domain/pkce.ts'
import { digest } from '../domain/secrets.ts'
import { InvalidGrant, InvalidRequest } from '../errors.ts'
import { findAuthorizationCode, redeemAuthorizationCode } from '../repositories/codes.ts'
import { revokeGrant } from '../repositories/tokens.ts'
import { findUserById } from '../repositories/users.ts'
import { newTokenValues, tokenResponse } from './issue.ts'
import { type GrantHandler, INVALID_GRANT_MESSAGE, requireParam } from './types.ts'

export const authorizationCodeGrant: GrantHandler = {
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  clientRequired: true,

  async handle(context, { params, client }) {
    const code = requireParam(params, 'code')
    const redirectUri = requireParam(params, 'redirect_uri')
    const verifier = params.code_verifier
    if (verifier !== undefined && !isValidCodeVerifier(verifier)) {
      throw new InvalidRequest('code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~].')
    }
    const application = client as Application
    const values = newTokenValues(application.grant_types.includes('refresh_token'))
    // the common case in one round trip: every binding is checked by the update itself
    const redeemed = await redeemAuthorizationCode(context.db, {
      digest: digest(code),
      applicationId: application.id,
      redirectUri,
      verifier: verifier ?? null,
      verifierS256: verifier === undefined ? null : s256(verifier),
      accessDigest: digest(values.accessToken),
      refreshDigest: values.refreshToken ? digest(values.refreshToken) : null,
      ttlSeconds: ACCESS_TOKEN_TTL,
    })
    if (redeemed) {
      const response = tokenResponse(values, redeemed.scopes, redeemed.createdAt)
      if (!redeemed.scopes.includes('openid')) return response
      return { ...response, id_token: await idTokenFor(context, application, redeemed) }
    }
    throw await whyNotRedeemed(context, code, redirectUri, verifier, application)
  },
}

/** OpenID Connect Core 3.1.3.3: the id_token of a code redeemed with the openid scope. */
export async function idTokenFor(
  context: ServerContext,
  client: Application,
  grant: { userId: number; scopes: string[]; nonce: string | null; authTime: Date | null },
): Promise<string> {
  const user = await findUserById(context.db, grant.userId)
  if (!user) throw new InvalidGrant(INVALID_GRANT_MESSAGE)
  return context.openid.idToken({
    issuer: context.settings.issuer,
    clientId: client.uid,
    user,
    scopes: grant.scopes,
    nonce: grant.nonce,
    authTime: grant.authTime,
  })
}

/** The error for a code that did not redeem; a used code is a replay and ends its grant. */
async function whyNotRedeemed(
  context: ServerContext,
  code: string,
  redirectUri: string,
  verifier: string | undefined,
  client: Application,
): Promise<InvalidGrant> {
  const { db } = context
  const row = await findAuthorizationCode(db, digest(code))
  if (!row || row.application_id !== client.id) return new InvalidGrant(INVALID_GRANT_MESSAGE)
  if (row.consumed_at) {
    // a second redemption (or the loser of a concurrent one) means the code leaked:
    // nothing issued from it stays valid
    await context.commitChange((trx) => revokeGrant(trx, row.grant_id))
    return new InvalidGrant(INVALID_GRANT_MESSAGE)
  }
  if (row.expired || row.redirect_uri !== redirectUri) return new InvalidGrant(INVALID_GRANT_MESSAGE)
  if (row.code_challenge) {
    if (verifier === undefined) return new InvalidGrant('PKCE verification failed: code_verifier is required.')
    if (!verifierMatches(verifier, row.code_challenge, row.code_challenge_method ?? 'S256')) {
      return new InvalidGrant('PKCE verification failed.')
    }
  } else if (verifier !== undefined) {
    // downgrade defence: a verifier for a code requested without a challenge
    return new InvalidGrant('PKCE verification failed: the authorization request had no code_challenge.')
  }
  return new InvalidGrant(INVALID_GRANT_MESSAGE)
}
