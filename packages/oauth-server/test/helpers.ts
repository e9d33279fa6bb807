import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { createApplication, createUser } from '../src/accounts.ts'
import { buildApp } from '../src/app.ts'
import { defaultSettings, type OAuthSettings } from '../src/config.ts'
import type { OAuthDB } from '../src/db/schema.ts'
import { totp } from '../src/domain/totp.ts'
import { oauthService } from '../src/service.ts'
import { memoryThrottle, type Throttle } from '../src/throttle.ts'

export interface TestServer {
  app: FastifyInstance
  database: TestDatabase<OAuthDB>
  db: Kysely<OAuthDB>
  settings: OAuthSettings
  url: string
  close(): Promise<void>
}

/** A migrated database and the server listening on a random loopback port, issuer = its URL. */
export async function startServer(
  overrides: Partial<OAuthSettings> = {},
  options: { throttle?: Throttle; listen?: boolean } = {},
): Promise<TestServer> {
  const database = await createTestDatabase<OAuthDB>('oauth', oauthService.migrationsDir)
  const settings = defaultSettings(overrides)
  const throttle = options.throttle ?? memoryThrottle(settings.throttle)
  const app = await buildApp({ database, settings, throttle })
  let url = settings.issuer
  if (options.listen !== false) {
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    url = address
    settings.issuer = address
  } else {
    await app.ready()
  }
  return {
    app,
    database,
    db: database.db,
    settings,
    url,
    close: async () => {
      await app.close()
      await database.close()
    },
  }
}

export const PASSWORD = 'correct horse battery'

export async function seed(db: Kysely<OAuthDB>, secretKey: Buffer) {
  const alice = await createUser(db, {
    username: 'alice',
    password: PASSWORD,
    email: 'alice@example.org',
    name: 'Alice',
  })
  const bob = await createUser(db, { username: 'bob', password: PASSWORD, with2fa: true, name: 'Bob', secretKey })
  const web = await createApplication(db, {
    name: 'Web App',
    redirectUris: ['https://client.example/cb', 'http://127.0.0.1/loopback'],
    scopes: ['api', 'read_api', 'read_user', 'openid', 'profile', 'email'],
  })
  const spa = await createApplication(db, {
    name: 'Single Page',
    redirectUris: ['https://spa.example/cb'],
    scopes: ['read_user', 'read_api'],
    confidential: false,
  })
  const other = await createApplication(db, {
    name: 'Other',
    redirectUris: ['https://other.example/cb'],
    scopes: ['api', 'read_user'],
  })
  return {
    alice: alice.user,
    bob: { ...bob.user, otpSecret: bob.otpSecret as string },
    web: { ...web.application, secret: web.secret as string },
    spa: spa.application,
    other: { ...other.application, secret: other.secret as string },
  }
}

/** A cookie-keeping HTTP client that never follows redirects, like a browser driven step by step. */
export class Browser {
  readonly base: string
  readonly cookies = new Map<string, string>()

  constructor(base: string) {
    this.base = base
  }

  async request(path: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = {}
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
    let body: string | undefined
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = new URLSearchParams(init.form).toString()
    }
    const response = await fetch(new URL(path, this.base), {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      headers,
      body,
      redirect: 'manual',
    })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = (pair as string).indexOf('=')
      const name = (pair as string).slice(0, eq)
      const value = (pair as string).slice(eq + 1)
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return response
  }
}

export function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1] as string] = decodeEntities(match[2] as string)
  }
  return fields
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
}

export interface SignIn {
  username: string
  password: string
  otpSecret?: string
}

/**
 * Drives the pages from an authorization URL to the redirect back to the client: sign-in form,
 * TOTP form when needed, consent form. Returns the final Location (the client's redirect URI).
 */
export async function authorizeInBrowser(
  browser: Browser,
  authorizationUrl: string,
  who: SignIn,
  decision: 'approve' | 'deny' = 'approve',
): Promise<string> {
  let response = await browser.request(authorizationUrl)
  for (let step = 0; step < 10; step++) {
    const location = response.headers.get('location')
    if (response.status === 302 || response.status === 303) {
      const target = new URL(location as string, browser.base)
      if (target.origin !== new URL(browser.base).origin) return target.toString()
      response = await browser.request(target.pathname + target.search)
      continue
    }
    if (response.status !== 200) throw new Error(`unexpected ${response.status}: ${await response.text()}`)
    const page = await response.text()
    const fields = formFields(page)
    if (page.includes('action="/users/sign_in"')) {
      response = await browser.request('/users/sign_in', {
        form: { ...fields, username: who.username, password: who.password },
      })
    } else if (page.includes('action="/users/two_factor"')) {
      if (!who.otpSecret) throw new Error('second factor asked for a user without one')
      response = await browser.request('/users/two_factor', { form: { ...fields, otp_attempt: totp(who.otpSecret) } })
    } else if (page.includes('action="/oauth/authorize"')) {
      response = await browser.request('/oauth/authorize', { form: { ...fields, decision } })
    } else {
      throw new Error(`unexpected page: ${page.slice(0, 200)}`)
    }
  }
  throw new Error('too many steps')
}

/** POSTs a form to the server, the way a client library would. */
export async function postForm(
  base: string,
  path: string,
  form: Record<string, string | string[]>,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(form)) for (const item of Array.isArray(v) ? v : [v]) params.append(k, item)
  const response = await fetch(new URL(path, base), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: params.toString(),
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} }
}

/** Redeems a code at the token endpoint (RFC 6749 4.1.3), the client authenticated by `headers`. */
export function exchangeCode(base: string, code: string, redirectUri: string, headers: Record<string, string> = {}) {
  return postForm(base, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: redirectUri }, headers)
}

export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

/** A code issued the way the authorization endpoint issues it, without driving the pages. */
export async function issueCode(
  server: TestServer,
  input: {
    client: import('../src/db/schema.ts').Application
    userId: number
    redirectUri: string
    scopes?: string[]
    codeChallenge?: string
  },
): Promise<string> {
  const { approve } = await import('../src/authorization/response.ts')
  const location = await approve(
    server.db,
    {
      client: input.client,
      redirectUri: input.redirectUri,
      responseType: 'code',
      scopes: input.scopes ?? ['read_user'],
      state: undefined,
      codeChallenge: input.codeChallenge,
      codeChallengeMethod: input.codeChallenge ? 'S256' : undefined,
      nonce: undefined,
      dpopJkt: undefined,
      pushed: undefined,
    },
    input.userId,
    server.settings.issuer,
  )
  return new URL(location).searchParams.get('code') as string
}

/** An access token (and refresh token) issued directly, for API tests. */
export async function issueToken(
  server: TestServer,
  input: { applicationId: number | null; userId: number; scopes: string[]; refresh?: boolean },
) {
  const { issueTokens, newGrantId } = await import('../src/grants/issue.ts')
  return issueTokens(server.db, { ...input, grantId: newGrantId(), refresh: input.refresh ?? false })
}
