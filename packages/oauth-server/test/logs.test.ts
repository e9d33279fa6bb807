/** RFC 9700 / the security baseline: logs never hold tokens, codes, secrets or passwords. */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApplication } from '../src/accounts.ts'
import { loadSecretKey } from '../src/config.ts'
import type { OAuthDB } from '../src/db/schema.ts'
import { DEVICE_CODE_GRANT } from '../src/domain/grant-types.ts'
import { oauthService } from '../src/service.ts'
import { authorizeInBrowser, Browser, basic, exchangeCode, PASSWORD, postForm, seed } from './helpers.ts'

const SECRET_KEY = randomBytes(32).toString('hex')

describe('logs of a running server', () => {
  let database: TestDatabase<OAuthDB>
  let child: ChildProcess
  let output = ''
  let base = ''

  beforeAll(async () => {
    database = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
    child = spawn(
      process.execPath,
      [
        '--experimental-strip-types',
        '--disable-warning=ExperimentalWarning',
        fileURLToPath(new URL('../src/server.ts', import.meta.url)),
      ],
      {
        env: {
          ...process.env,
          OAUTH_DATABASE_URL: database.url,
          OAUTH_PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'trace',
          OAUTH_SECRET_KEY: SECRET_KEY,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    child.stdout?.on('data', (chunk) => {
      output += String(chunk)
    })
    child.stderr?.on('data', (chunk) => {
      output += String(chunk)
    })
    const deadline = Date.now() + 20_000
    while (!base && Date.now() < deadline) {
      const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match) base = match[1] as string
      else await new Promise((r) => setTimeout(r, 50))
    }
    if (!base) throw new Error(`server did not start: ${output}`)
  })

  afterAll(async () => {
    child?.kill('SIGTERM')
    await new Promise((r) => child?.once('exit', r))
    await database?.close()
  })

  it('hold none of the credentials of a code flow, a password grant and API calls', async () => {
    const f = await seed(database.db, loadSecretKey({ OAUTH_SECRET_KEY: SECRET_KEY, DATA_DIR: '.data' }))
    const secrets: string[] = [PASSWORD, f.web.secret]
    // the issuer defaults to the configured port (0), so the flow is checked by its effects, not by iss
    const browser = new Browser(base)
    const location = await authorizeInBrowser(
      browser,
      `/oauth/authorize?client_id=${f.web.uid}&redirect_uri=${encodeURIComponent('https://client.example/cb')}&response_type=code&state=s`,
      { username: 'alice', password: PASSWORD },
    )
    secrets.push(...browser.cookies.values())
    const code = new URL(location).searchParams.get('code') as string
    secrets.push(code)
    const tokens = await exchangeCode(base, code, 'https://client.example/cb', {
      authorization: basic(f.web.uid, f.web.secret),
    })
    expect(tokens.status).toBe(200)
    const access = tokens.body.access_token as string
    secrets.push(access, tokens.body.refresh_token as string)
    expect((await fetch(`${base}/api/v4/user?access_token=${access}`)).status).toBe(200)
    expect((await fetch(`${base}/api/v4/user`, { headers: { authorization: `Bearer ${access}` } })).status).toBe(200)
    // GitLab's third place for a token: the bearer_token parameter
    expect((await fetch(`${base}/api/v4/user?bearer_token=${access}`)).status).toBe(200)
    expect((await fetch(`${base}/oauth/token/info?bearer_token=${access}`)).status).toBe(200)
    const password = await postForm(base, '/oauth/token', {
      grant_type: 'password',
      username: 'alice',
      password: PASSWORD,
      client_id: f.web.uid,
      client_secret: f.web.secret,
    })
    secrets.push(password.body.access_token as string)
    await postForm(base, '/oauth/token', { grant_type: 'password', username: 'alice', password: 'a wrong password' })
    secrets.push('a wrong password')
    // the device flow: both of its codes, in the query of the verification page and in forms
    const device = await createApplication(database.db, {
      name: 'Device',
      redirectUris: ['http://127.0.0.1/cb'],
      scopes: ['read_user'],
      confidential: false,
      grantTypes: [DEVICE_CODE_GRANT],
    })
    const codes = await postForm(base, '/oauth/authorize_device', {
      client_id: device.application.uid,
      scope: 'read_user',
    })
    expect(codes.body).toMatchObject({ interval: 5 })
    const userCode = codes.body.user_code as string
    const deviceCode = codes.body.device_code as string
    secrets.push(deviceCode, userCode, userCode.replace('-', ''))
    expect((await browser.request(`/oauth/device?user_code=${userCode}`)).status).toBe(200)
    const polled = await postForm(base, '/oauth/token', {
      grant_type: DEVICE_CODE_GRANT,
      device_code: deviceCode,
      client_id: device.application.uid,
    })
    expect(polled.body.error).toBe('authorization_pending')
    await new Promise((r) => setTimeout(r, 200))
    expect(output).toContain('/oauth/device?user_code=[REDACTED]')
    expect(output).toContain('/api/v4/user?access_token=[REDACTED]')
    expect(output).toContain('/api/v4/user?bearer_token=[REDACTED]')
    expect(output).toContain('/oauth/token/info?bearer_token=[REDACTED]')
    for (const secret of secrets) expect(output.includes(secret), `log holds ${secret.slice(0, 6)}...`).toBe(false)
  })
})
