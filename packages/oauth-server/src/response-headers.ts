import { isHttpsIssuer, type OAuthSettings } from './config.ts'

/** Two years; no includeSubDomains: the issuer's host speaks for itself, not for its siblings. */
const HSTS_MAX_AGE = 63_072_000
/** Answers with personal data or a token's effects. */
const PRIVATE_PATHS = ['/api/v4/', '/oauth/userinfo']

/** The headers every answer of a path carries, errors included (the platform's `pathHeaders`). */
export function oauthPathHeaders(
  settings: OAuthSettings,
): (path: string) => Readonly<Record<string, string>> | undefined {
  // RFC 6797: a browser that reached the https issuer once never falls back to plain http
  const everywhere = isHttpsIssuer(settings) ? { 'strict-transport-security': `max-age=${HSTS_MAX_AGE}` } : undefined
  // no shared or browser cache keeps these answers, errors included
  const personal = { ...everywhere, 'cache-control': 'no-store' }
  return (path) => (PRIVATE_PATHS.some((prefix) => path.startsWith(prefix)) ? personal : everywhere)
}
