/**
 * Generators for the parts of a request a server reads besides its documented parameters:
 * redirect URIs, and every header a service interprets. Each mixes values that should work,
 * values at the edge of a grammar, and values that have broken parsers elsewhere.
 */
import fc from 'fast-check'
import { hostileString } from './hostile.ts'

type Mutation = (uri: URL, raw: string) => string

const origin = (u: URL) => `${u.protocol}//${u.host}`
const rest = (u: URL) => `${u.pathname}${u.search}`

/** Ways a redirect URI is bent: ports, schemes, hosts, IPv6, encodings, userinfo, paths. */
const MUTATIONS: Mutation[] = [
  (_u, raw) => raw,
  // ports out of range or malformed, on loopback and elsewhere
  ...['0', '1', '65535', '65536', '99999', '123456', '00080', '-1', '', '80a', '1e3', '8080 '].flatMap(
    (port): Mutation[] => [
      (u) => `http://127.0.0.1:${port}${rest(u)}`,
      (u) => `http://[::1]:${port}${rest(u)}`,
      (u) => `${u.protocol}//${u.hostname}:${port}${rest(u)}`,
    ],
  ),
  // schemes
  ...['HTTP:', 'HtTpS:', 'https:', 'http:', 'javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'ftp:', 'ws:'].map(
    (scheme): Mutation =>
      (u) =>
        `${scheme}//${u.host}${rest(u)}`,
  ),
  (u) => `javascript:alert(1)//${u.host}${rest(u)}`,
  (u) => `data:text/html,<script>location='${origin(u)}'</script>`,
  (u) => `//${u.host}${rest(u)}`,
  (u) => `${u.host}${rest(u)}`,
  (u) => `com.example.app:${rest(u)}`,
  // hosts: unicode look-alikes, IDN, case, trailing dot, credentials, backslashes
  (u) => `${u.protocol}//${u.hostname.replace(/c/g, 'с')}${rest(u)}`,
  (u) =>
    `${u.protocol}//${u.hostname.replace(/[a-z]/, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0))}${rest(u)}`,
  (u) => `${u.protocol}//xn--80ak6aa92e.com${rest(u)}`,
  (u) => `${u.protocol}//${u.host.toUpperCase()}${rest(u)}`,
  (u) => `${u.protocol}//${u.hostname}.${rest(u)}`,
  (u) => `${u.protocol}//${u.host}@evil.example${rest(u)}`,
  (u) => `${u.protocol}//evil.example@${u.host}${rest(u)}`,
  (u) => `${u.protocol}//evil.example\\@${u.host}${rest(u)}`,
  (u) => `${u.protocol}\\\\${u.host}${rest(u)}`,
  (u) => `${u.protocol}//${u.host}\u202e${rest(u)}`,
  (u) => `${u.protocol}//${u.host}${rest(u)}\u{1f600}`,
  (u) => `${u.protocol}//${u.host}${rest(u)}\u0301`,
  // IPv6 literals, well-formed and not
  ...['[::1]', '[::ffff:127.0.0.1]', '[0:0:0:0:0:0:0:1]', '[fe80::1%25eth0]', '[::1', '::1]', '[v1.x]', '[::]'].map(
    (host): Mutation =>
      (u) =>
        `http://${host}${rest(u)}`,
  ),
  (u) => `http://[::1]:${u.port || '80'}${rest(u)}`,
  // percent-encoding: of the path, the host, double, broken, NUL
  (u) => `${origin(u)}${u.pathname.replace(/\//g, '%2F')}${u.search}`,
  (u) => `${origin(u)}${u.pathname}%2e%2e/${u.search}`,
  (u) => `${origin(u)}${u.pathname.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)}${u.search}`,
  (u) => `${u.protocol}//%63${u.host.slice(1)}${rest(u)}`,
  (u) => `${origin(u)}${u.pathname}%252F`,
  (u) => `${origin(u)}${u.pathname}%zz`,
  (u) => `${origin(u)}${u.pathname}%`,
  (u) => `${origin(u)}${u.pathname}%00`,
  // paths, queries and fragments added
  (u) => `${origin(u)}${u.pathname}/`,
  (u) => `${origin(u)}${u.pathname}/../${u.pathname}`,
  (u) => `${origin(u)}${u.pathname.toUpperCase()}`,
  (u) => `${origin(u)}${rest(u)}${u.search ? '&' : '?'}next=https://evil.example`,
  (u) => `${origin(u)}${rest(u)}#fragment`,
  (u) => `${origin(u)}${rest(u)}${'a'.repeat(8000)}`,
  (u) => ` ${origin(u)}${rest(u)}`,
  (u) => `${origin(u)}${rest(u)}\t`,
]

/**
 * Redirect URIs close to the registered ones (so matching is really exercised) and bent in
 * every way a redirect URI has been bent, plus hostile strings.
 */
export function hostileRedirectUris(registered: readonly string[]): fc.Arbitrary<string> {
  const parsed = registered.map((raw) => ({ raw, url: new URL(raw) }))
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.tuple(fc.constantFrom(...parsed), fc.constantFrom(...MUTATIONS)).map(([r, m]) => m(r.url, r.raw)),
    },
    { weight: 1, arbitrary: hostileString() },
  )
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')
/** Header values cannot carry CR or LF (they would end the header) nor characters beyond latin1. */
const headerSafe = (value: string) =>
  Array.from(value.replace(/[\r\n]/g, ' '), (c) => (c.charCodeAt(0) > 0xff ? '?' : c)).join('')
const hostileHeader = () => hostileString().map(headerSafe)

/** `Authorization` values: Bearer and Basic, well-formed and not, with the given tokens and clients. */
export function authorizationValues(
  input: { tokens?: readonly string[]; clients?: ReadonlyArray<{ id: string; secret: string }> } = {},
): fc.Arbitrary<string> {
  const tokens = input.tokens?.length ? input.tokens : ['token']
  const clients = input.clients?.length ? input.clients : [{ id: 'client', secret: 'secret' }]
  return fc.oneof(
    fc.constantFrom(...tokens).map((t) => `Bearer ${t}`),
    fc.constantFrom(...tokens).map((t) => `bearer   ${t}  `),
    fc
      .constantFrom(...clients)
      .map((c) => `Basic ${base64(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret)}`)}`),
    fc.constantFrom(...clients).map((c) => `Basic ${base64(`${c.id}:%zz${c.secret}`)}`),
    fc.constantFrom(
      'Bearer',
      'Bearer ',
      'Basic',
      'Basic !!!',
      `Basic ${base64('no-colon')}`,
      `Basic ${base64(':')}`,
      `Basic ${base64('%zz:%zz')}`,
      `Basic ${base64('\u0000:\u0000')}`,
      'Digest username="x"',
      'Negotiate',
      `Bearer ${'x'.repeat(8000)}`,
      'Bearer a, Bearer b',
    ),
    hostileString().map((v) => `Bearer ${headerSafe(v)}`),
    hostileString().map((v) => `Basic ${base64(v)}`),
  )
}

/** `Cookie` values around the given cookie names. */
export function cookieValues(names: readonly string[], valid: readonly string[] = []): fc.Arbitrary<string> {
  return fc.oneof(
    ...(valid.length ? [fc.constantFrom(...valid)] : []),
    fc.tuple(fc.constantFrom(...names), hostileHeader()).map(([n, v]) => `${n}=${v.replace(/;/g, '')}`),
    fc.constantFrom(...names).map((n) => `${n}=`),
    fc.constantFrom(...names).map((n) => `${n}="quoted"; ${n}=twice`),
    fc.constantFrom(...names).map((n) => `${n}=${'x'.repeat(6000)}`),
    fc.constantFrom('=', ';;;', 'a', '=x', `${'k=v; '.repeat(200)}`),
  )
}

/** `X-Forwarded-For`, `Forwarded` and `X-Real-IP` values: lists, IPv6, ports, junk, long chains. */
export function forwardedForValues(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      '203.0.113.7',
      '203.0.113.7, 10.1.2.3',
      '198.51.100.1, 203.0.113.7, 127.0.0.1',
      '::1',
      '2001:db8::1',
      '[2001:db8::1]:443',
      'fe80::1%eth0',
      '::ffff:203.0.113.7',
      'unknown',
      '999.1.1.1',
      ',',
      ' , ,',
      '_hidden',
      '1.2.3.4:80',
      Array.from({ length: 200 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(', '),
    ),
    fc.array(fc.ipV4(), { minLength: 1, maxLength: 6 }).map((ips) => ips.join(', ')),
    fc.array(fc.ipV6(), { minLength: 1, maxLength: 3 }).map((ips) => ips.join(', ')),
    hostileHeader(),
  )
}

export function forwardedValues(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      'for=192.0.2.60;proto=http;by=203.0.113.43',
      'for="[2001:db8:cafe::17]:4711"',
      'for=unknown',
      'for=_hidden, for=198.51.100.17',
      'proto=https;host=evil.example',
      'for=',
      ';;;',
    ),
    hostileHeader(),
  )
}

/** `Content-Type` values: charsets, cases, parameters, near misses. */
export function contentTypeValues(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      'application/x-www-form-urlencoded',
      'application/x-www-form-urlencoded; charset=utf-8',
      'application/x-www-form-urlencoded;charset=latin1',
      'application/x-www-form-urlencoded; charset=utf-16',
      'APPLICATION/X-WWW-FORM-URLENCODED',
      'application/x-www-form-urlencodedX',
      'application/json',
      'application/json; charset=x-unknown',
      'multipart/form-data; boundary=x',
      'text/plain',
      '*/*',
      '',
      ';',
      'application/',
    ),
    hostileHeader(),
  )
}

/** `X-Request-Id` values: kept when short and plain, replaced otherwise. */
export function requestIdValues(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom('trace-42', 'a'.repeat(64), 'a'.repeat(65), 'a b', '../x', '%00', 'é'),
    hostileHeader(),
  )
}

/** `Accept` values. */
export function acceptValues(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      'application/json',
      'text/csv',
      'text/plain',
      'text/html',
      '*/*',
      'application/json;q=0, text/csv;q=0.5',
      'text/*;q=abc',
      `${'text/csv, '.repeat(500)}*/*`,
      '',
    ),
    hostileHeader(),
  )
}

/** `If-None-Match` values. */
export function ifNoneMatchValues(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom('*', '"abc"', 'W/"abc"', '"a", "b", W/"c"', '"unterminated', 'W/', `${'"x", '.repeat(500)}"y"`),
    hostileHeader(),
  )
}

/** Values of a header carrying a secret (an API key, a personal access token). */
export function secretHeaderValues(known: readonly string[], prefix: string): fc.Arbitrary<string> {
  return fc.oneof(
    ...(known.length ? [fc.constantFrom(...known)] : []),
    fc.constantFrom(prefix, `${prefix}${'A'.repeat(43)}`, `${prefix}${'x'.repeat(5000)}`, ` ${prefix}`),
    hostileHeader(),
  )
}
