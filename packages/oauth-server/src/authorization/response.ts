/** Authorization responses (RFC 6749 4.1.2 / 4.2.2) with `iss` (RFC 9207). */
import type { Kysely } from 'kysely'
import type { OAuthDB } from '../db/schema.ts'
import { AUTHORIZATION_CODE_TTL } from '../domain/lifetimes.ts'
import { formatScope } from '../domain/scopes.ts'
import { digest, generateSecret } from '../domain/secrets.ts'
import { InvalidRequest, type OAuthError } from '../errors.ts'
import { issueTokens, newGrantId } from '../grants/issue.ts'
import { insertAuthorizationCode } from '../repositories/codes.ts'
import { consumePushedRequest } from '../repositories/pushed-requests.ts'
import type { AuthorizationRequest, RedirectTarget } from './request.ts'

/** The redirect URI with parameters added to its query (code) or set as its fragment (token). */
export function redirectWith(target: RedirectTarget, params: Record<string, string | undefined>, issuer: string) {
  const url = new URL(target.redirectUri)
  const all: Record<string, string | undefined> = { ...params, state: target.state, iss: issuer }
  if (target.fragment) {
    const fragment = new URLSearchParams()
    for (const [k, v] of Object.entries(all)) if (v !== undefined) fragment.set(k, v)
    url.hash = fragment.toString()
  } else {
    for (const [k, v] of Object.entries(all)) if (v !== undefined) url.searchParams.append(k, v)
  }
  return url.toString()
}

export function errorRedirect(target: RedirectTarget, error: OAuthError, issuer: string): string {
  return redirectWith(target, error.toParams(), issuer)
}

export const targetOf = (request: AuthorizationRequest): RedirectTarget => ({
  redirectUri: request.redirectUri,
  fragment: request.responseType === 'token',
  state: request.state,
})

/** Issues the code (or, for the implicit grant, the access token) and returns where to send the browser. */
export async function approve(
  db: Kysely<OAuthDB>,
  request: AuthorizationRequest,
  userId: number,
  issuer: string,
  authTime: Date | null = null,
): Promise<string> {
  const target = targetOf(request)
  // RFC 9126 4: a pushed request is used once; of two decisions racing, the second is refused
  if (request.pushed && !(await consumePushedRequest(db, request.pushed.id))) {
    return errorRedirect(target, new InvalidRequest('The request_uri was used already or has expired.'), issuer)
  }
  if (request.responseType === 'token') {
    const tokens = await issueTokens(db, {
      applicationId: request.client.id,
      userId,
      scopes: request.scopes,
      grantId: newGrantId(),
      refresh: false,
    })
    return redirectWith(
      target,
      {
        access_token: tokens.access_token,
        token_type: tokens.token_type,
        expires_in: String(tokens.expires_in),
        scope: formatScope(request.scopes),
      },
      issuer,
    )
  }
  const code = generateSecret('code')
  await insertAuthorizationCode(db, {
    digest: digest(code),
    applicationId: request.client.id,
    userId,
    redirectUri: request.redirectUri,
    scopes: request.scopes,
    codeChallenge: request.codeChallenge ?? null,
    codeChallengeMethod: request.codeChallengeMethod ?? null,
    grantId: newGrantId(),
    ttlSeconds: AUTHORIZATION_CODE_TTL,
    nonce: request.nonce ?? null,
    authTime,
    dpopJkt: request.dpopJkt ?? null,
  })
  return redirectWith(target, { code }, issuer)
}
