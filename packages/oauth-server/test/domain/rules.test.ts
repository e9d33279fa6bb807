import { describe, expect, it } from 'vitest'
import { s256, verifierMatches } from '../../src/domain/pkce.ts'
import { matchRedirectUri, redirectUriProblem } from '../../src/domain/redirect-uri.ts'
import { resolveScopes } from '../../src/domain/scopes.ts'
import { digest, generateClientId, generateSecret, matchesDigest, PREFIX } from '../../src/domain/secrets.ts'
import { base32Encode, hotp, verifyTotp } from '../../src/domain/totp.ts'

describe('RFC 7636 appendix B: S256 challenge', () => {
  it('matches the RFC example', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')
    expect(
      verifierMatches(
        'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
        'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        'S256',
      ),
    ).toBe(true)
    expect(
      verifierMatches(
        'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXj',
        'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        'S256',
      ),
    ).toBe(false)
  })
})

describe('RFC 6238 appendix B: TOTP (SHA-1 vectors, 6 digits)', () => {
  const secret = Buffer.from('12345678901234567890')
  it.each([
    [59, '287082'],
    [1111111109, '081804'],
    [1234567890, '005924'],
    [2000000000, '279037'],
  ])('T=%i -> %s', (seconds, code) => {
    expect(hotp(secret, Math.floor(seconds / 30))).toBe(code)
  })
  it('accepts one step of drift, refuses a used step', () => {
    const b32 = base32Encode(secret)
    const at = 1111111109 * 1000
    expect(verifyTotp(b32, '081804', null, at)).toBe(Math.floor(1111111109 / 30))
    expect(verifyTotp(b32, '081804', null, at + 30_000)).toBe(Math.floor(1111111109 / 30))
    expect(verifyTotp(b32, '081804', null, at + 90_000)).toBeUndefined()
    expect(verifyTotp(b32, '081804', Math.floor(1111111109 / 30), at)).toBeUndefined()
  })
})

describe('RFC 9700 2.1 / RFC 8252 7.3: redirect URI rules', () => {
  const registered = ['https://app.example/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb?x=1']
  it('exact string match only', () => {
    expect(matchRedirectUri('https://app.example/cb', registered)).toBe('https://app.example/cb')
    for (const uri of [
      'https://app.example/cb/',
      'https://app.example/Cb',
      'https://app.example/cb?x',
      'https://app.example:443/cb',
      'http://app.example/cb',
    ]) {
      expect(matchRedirectUri(uri, registered)).toBeUndefined()
    }
  })
  it('loopback IP literals may change the port only', () => {
    expect(matchRedirectUri('http://127.0.0.1:5555/cb', registered)).toBe('http://127.0.0.1/cb')
    expect(matchRedirectUri('http://[::1]:1/cb?x=1', registered)).toBe('http://[::1]:8080/cb?x=1')
    expect(matchRedirectUri('http://127.0.0.1:5555/cb2', registered)).toBeUndefined()
    expect(matchRedirectUri('http://localhost:5555/cb', registered)).toBeUndefined()
  })
  it('a loopback redirect with a port out of range, or one no URL parser reads, matches nothing', () => {
    for (const port of ['99999', '65536', '00000080000', '-1', '1e3', '']) {
      expect(matchRedirectUri(`http://127.0.0.1:${port}/cb`, registered), port).toBeUndefined()
    }
    expect(matchRedirectUri('http://127.0.0.1:65535/cb', registered)).toBe('http://127.0.0.1/cb')
  })
  it('registration refuses script schemes, fragments and plain http off loopback', () => {
    expect(redirectUriProblem('javascript:alert(1)')).toBeDefined()
    expect(redirectUriProblem('data:text/html,x')).toBeDefined()
    expect(redirectUriProblem('https://app.example/cb#x')).toBeDefined()
    expect(redirectUriProblem('http://app.example/cb')).toBeDefined()
    expect(redirectUriProblem('http://127.0.0.1/cb')).toBeUndefined()
    expect(redirectUriProblem('com.example.app:/oauth')).toBeUndefined()
  })
})

describe('RFC 6749 3.3: scopes', () => {
  it("defaults to GitLab's default scope (api) within the application's, refuses unknown or unregistered ones", () => {
    expect(resolveScopes(undefined, ['api', 'read_user'])).toEqual({ ok: true, scopes: ['api'] })
    expect(resolveScopes(undefined, ['read_user']).ok).toBe(false)
    expect(resolveScopes('read_user read_user', ['api', 'read_user'])).toEqual({ ok: true, scopes: ['read_user'] })
    expect(resolveScopes('sudo', ['api']).ok).toBe(false)
    expect(resolveScopes('read_api', ['api']).ok).toBe(false)
    expect(resolveScopes('', ['api']).ok).toBe(false)
  })
})

describe('credentials at rest', () => {
  it('are prefixed 256-bit values stored as SHA-256 digests, compared in constant time', () => {
    const token = generateSecret('accessToken')
    expect(token).toMatch(/^cmpa_[A-Za-z0-9_-]{43}$/)
    expect(digest(token)).toHaveLength(32)
    expect(matchesDigest(token, digest(token))).toBe(true)
    expect(matchesDigest(`${token}x`, digest(token))).toBe(false)
    expect(matchesDigest(token, null)).toBe(false)
  })

  it('never hands out the same entropy twice, across refills of the buffered random bytes', () => {
    // 1,000 credentials draw 32,000 bytes: eight refills of the 4 kB buffer
    const bodies = Array.from({ length: 1000 }, () => generateSecret('refreshToken').slice(PREFIX.refreshToken.length))
    expect(new Set(bodies).size).toBe(bodies.length)
    // and none is a slice of a buffer left unfilled
    expect(bodies.every((b) => !Buffer.from(b, 'base64url').equals(Buffer.alloc(32)))).toBe(true)
  })
})

describe('sealed TOTP secrets', () => {
  it('open with the key and purpose that sealed them, and only those', async () => {
    const { openSecret, sealSecret } = await import('../../src/domain/secret-box.ts')
    const { randomBytes } = await import('node:crypto')
    const key = randomBytes(32)
    const sealed = sealSecret(key, 'JBSWY3DPEHPK3PXP', 'users.otp_secret')
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP')
    expect(openSecret(key, sealed, 'users.otp_secret')).toBe('JBSWY3DPEHPK3PXP')
    expect(() => openSecret(randomBytes(32), sealed, 'users.otp_secret')).toThrow()
    expect(() => openSecret(key, sealed, 'other')).toThrow()
  })
})

describe('application ids', () => {
  it("take GitLab's form (64 hex characters), so none starts with a dash a command line would read as a flag", () => {
    const ids = Array.from({ length: 2000 }, generateClientId)
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{64}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })
})
