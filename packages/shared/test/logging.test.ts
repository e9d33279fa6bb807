import { describe, expect, it } from 'vitest'
import { redactUrl } from '../src/server/logging.ts'

describe('log redaction', () => {
  it('replaces every credential in a query string and keeps the rest', () => {
    expect(
      redactUrl(
        '/oauth/token/info?access_token=abc&x=1&code=zzz&Client_Secret=s&password=p&private_token=t&state=keep',
      ),
    ).toBe(
      '/oauth/token/info?access_token=[REDACTED]&x=1&code=[REDACTED]&Client_Secret=[REDACTED]&password=[REDACTED]&private_token=[REDACTED]&state=keep',
    )
    expect(redactUrl('/api/v4/user')).toBe('/api/v4/user')
    expect(redactUrl('/x?%61ccess_token=abc')).toBe('/x?%61ccess_token=[REDACTED]')
  })

  it('redacts inside a parameter that carries a URL of its own (a device code inside return_to)', () => {
    const url = `/users/sign_in?return_to=${encodeURIComponent('/oauth/device?user_code=WXYZ-1234&x=1')}&error=invalid`
    const redacted = redactUrl(url)
    expect(redacted).not.toContain('WXYZ')
    expect(decodeURIComponent(redacted)).toBe(
      '/users/sign_in?return_to=/oauth/device?user_code=[REDACTED]&x=1&error=invalid',
    )
    // nothing to redact inside: the value is kept byte for byte
    const plain = `/users/sign_in?return_to=${encodeURIComponent('/profile/applications?page=2')}`
    expect(redactUrl(plain)).toBe(plain)
  })
})
