/**
 * Redirect URI rules (RFC 9700 2.1, RFC 8252 7.3): a registered URI is absolute, has no
 * fragment, uses https or loopback http (or a private-use scheme for native apps), and never
 * a script-bearing scheme. A requested URI must equal a registered one as a string; only
 * loopback IP redirects may differ in the port.
 */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:'])
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]'])

export function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)
}

/** Why a URI cannot be registered, or undefined when it can. */
export function redirectUriProblem(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'is not an absolute URI'
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `uses the forbidden scheme ${url.protocol}`
  if (url.hash || value.includes('#')) return 'must not contain a fragment'
  if (url.protocol === 'http:' && !isLoopback(url) && url.hostname !== 'localhost') {
    return 'must use https (plain http only for loopback)'
  }
  if (url.username || url.password) return 'must not contain credentials'
  return undefined
}

/** Loopback redirect split into host and the rest, port removed: `http://127.0.0.1:PORT/cb`. */
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/

/** The registered URI a requested one matches, or undefined. */
export function matchRedirectUri(requested: string, registered: readonly string[]): string | undefined {
  if (registered.includes(requested)) return requested
  const asked = LOOPBACK.exec(requested)
  // a port beyond 65535 (or anything a URL parser refuses) can never be redirected to
  if (!asked || Number(asked[2] ?? 0) > 65535 || !URL.canParse(requested)) return undefined
  // RFC 8252 7.3: loopback redirects may use any port; everything else compares as written
  for (const candidate of registered) {
    const known = LOOPBACK.exec(candidate)
    if (known && known[1] === asked[1] && (known[3] ?? '') === (asked[3] ?? '')) return candidate
  }
  return undefined
}
