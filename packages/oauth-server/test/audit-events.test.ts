/**
 * Audit events in GitLab's shape: what is recorded (sign-ins and their failures, applications,
 * secrets, consents, tokens issued, revoked and revoked on replay, administrators' actions), who
 * may read them (administrators, at GET /api/v4/audit_events with GitLab's filters and
 * pagination), that nothing secret is stored, and that they are purged after the retention.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../src/accounts.ts'
import type { OAuthApp } from '../src/oauth-app.ts'
import {
  authorizeInBrowser,
  Browser,
  basic,
  exchangeCode,
  issueToken,
  PASSWORD,
  postForm,
  seed,
  startServer,
  type TestServer,
} from './helpers.ts'

let server: TestServer
let data: Awaited<ReturnType<typeof seed>>
let adminToken: string
const REDIRECT = 'https://client.example/cb'
const TYPED_LOGIN = 'hunter2-typed-as-a-login'
const WRONG_PASSWORD = 'Tr0ub4dor&3 typed wrong'

beforeAll(async () => {
  server = await startServer()
  data = await seed(server.db, server.settings.secretKey)
  const admin = await createUser(server.db, { username: 'root', password: PASSWORD, admin: true })
  adminToken = (await issueToken(server, { applicationId: data.web.id, userId: admin.user.id, scopes: ['api'] }))
    .access_token
})
afterAll(async () => server?.close())

async function events(query = '', token = adminToken) {
  const response = await fetch(`${server.url}/api/v4/audit_events${query}`, {
    headers: { authorization: `Bearer ${token}` },
  })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as AuditEventView[],
  }
}

/** An event as the API answers it (GitLab's AuditEvent entity). */
interface AuditEventView {
  id: number
  author_id: number
  entity_id: number | null
  entity_type: string
  event_name: string
  details: Record<string, string | null>
  created_at: string
}

const named = (list: AuditEventView[], name: string) => list.filter((e) => e.event_name === name)

describe('audit events (GitLab shape)', () => {
  it('records sign-ins and failed sign-ins, never the login typed for no account', async () => {
    const browser = new Browser(server.url)
    const form = async (username: string, password: string) => {
      const page = await browser.request('/users/sign_in')
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1] as string
      return browser.request('/users/sign_in', { form: { csrf_token: csrf, username, password } })
    }
    await form('alice', WRONG_PASSWORD)
    await form(TYPED_LOGIN, 'whatever')
    await form('alice', PASSWORD)
    const { body } = await events('?per_page=100')
    expect(
      named(body, 'login_failed_with_standard_authentication').map((e) => [
        e.author_id,
        e.entity_id,
        e.details.custom_message,
      ]),
    ).toEqual([
      [-1, null, 'Failed to sign in: no such account'],
      [data.alice.id, data.alice.id, 'Failed to sign in: wrong password'],
    ])
    const signedIn = named(body, 'user_signed_in')[0]
    expect(signedIn).toMatchObject({
      author_id: data.alice.id,
      entity_id: data.alice.id,
      entity_type: 'User',
      details: {
        author_name: 'alice',
        custom_message: 'Signed in with password',
        ip_address: '127.0.0.1',
        entity_path: 'alice',
      },
    })
    expect(Date.parse(signedIn?.created_at ?? '')).not.toBeNaN()
  })

  it('records consents, tokens issued and revoked, and a code redeemed twice', async () => {
    const url = `${server.url}/oauth/authorize?${new URLSearchParams({ client_id: data.web.uid, redirect_uri: REDIRECT, response_type: 'code', scope: 'read_user' })}`
    const location = await authorizeInBrowser(new Browser(server.url), url, { username: 'alice', password: PASSWORD })
    const code = new URL(location).searchParams.get('code') as string
    const auth = { authorization: basic(data.web.uid, data.web.secret) }
    const issued = await exchangeCode(server.url, code, REDIRECT, auth)
    expect((await exchangeCode(server.url, code, REDIRECT, auth)).status).toBe(400)
    await postForm(server.url, '/oauth/revoke', { token: String(issued.body.refresh_token) }, auth)
    await (server.app as OAuthApp).audit.flush()
    const { body } = await events('?per_page=100')
    expect(named(body, 'oauth_consent_granted')[0]).toMatchObject({
      author_id: data.alice.id,
      details: {
        target_type: 'Doorkeeper::Application',
        target_id: String(data.web.id),
        custom_message: 'Authorized Web App for read_user',
      },
    })
    expect(named(body, 'oauth_token_issued')[0]?.details).toMatchObject({
      author_name: `Web App (${data.web.uid})`,
      custom_message: 'Issued an access and a refresh token (authorization_code, Bearer, read_user)',
    })
    expect(named(body, 'oauth_grant_revoked_on_replay')).toHaveLength(1)
    expect(named(body, 'oauth_token_revoked')[0]?.details).toMatchObject({
      target_type: 'OauthRefreshToken',
      custom_message: 'Revoked a refresh token and its whole grant (RFC 7009)',
    })
  })

  it('records administrators\u2019 application changes through the API', async () => {
    const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }
    const created = await fetch(`${server.url}/api/v4/applications`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Audited', redirect_uri: REDIRECT, scopes: 'read_user' }),
    })
    const { id } = (await created.json()) as { id: number }
    await fetch(`${server.url}/api/v4/applications/${id}/renew-secret`, { method: 'POST', headers })
    const { body } = await events('?per_page=100')
    expect(named(body, 'oauth_application_created')[0]).toMatchObject({
      entity_type: 'Gitlab::Audit::InstanceScope',
      details: { author_name: 'root', target_id: String(id), custom_message: 'Created the application Audited' },
    })
    expect(named(body, 'oauth_application_secret_renewed')[0]?.details.custom_message).toBe(
      'Renewed the secret of Audited',
    )
  })

  it('nothing secret is stored: no token, code, secret or password, nor a login typed for no account', async () => {
    const rows = await server.db.selectFrom('audit_events').selectAll().execute()
    expect(rows.length).toBeGreaterThan(5)
    const text = JSON.stringify(rows)
    for (const secret of [
      'cmpa_',
      'cmpr_',
      'cmpc_',
      'cmps_',
      'cmpp_',
      PASSWORD,
      WRONG_PASSWORD,
      TYPED_LOGIN,
      data.web.secret,
    ]) {
      expect(text).not.toContain(secret)
    }
  })

  it("GitLab's filters and pagination; administrators only", async () => {
    const mine = await events(`?entity_type=User&entity_id=${data.alice.id}&per_page=1`)
    expect(mine.status).toBe(200)
    expect(mine.body).toHaveLength(1)
    expect(mine.body[0]?.entity_id).toBe(data.alice.id)
    expect(Number(mine.headers.get('x-total'))).toBeGreaterThan(1)
    expect(mine.headers.get('x-next-page')).toBe('2')
    const future = await events(`?created_after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)
    expect([future.status, future.body]).toEqual([200, []])
    expect(await events('?entity_id=1')).toMatchObject({
      status: 400,
      body: { error: 'entity_type is missing, entity_id requires entity_type' },
    })
    expect(await events('?created_before=yesterday')).toMatchObject({
      status: 400,
      body: { error: 'created_before is invalid' },
    })
    const one = (await events('?per_page=1')).body[0] as { id: number }
    const single = await fetch(`${server.url}/api/v4/audit_events/${one.id}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    })
    expect(await single.json()).toMatchObject({ id: one.id })
    const alice = (await issueToken(server, { applicationId: data.web.id, userId: data.alice.id, scopes: ['api'] }))
      .access_token
    expect(await events('', alice)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } })
  })

  it('events older than the retention are purged by the sweep', async () => {
    await server.db
      .updateTable('audit_events')
      .set({ created_at: sql<Date>`now() - interval '400 days'` })
      .where('event_name', '=', 'user_signed_in')
      .execute()
    await (server.app as OAuthApp).sweep()
    const left = await server.db.selectFrom('audit_events').select('event_name').execute()
    expect(left.some((e) => e.event_name === 'user_signed_in')).toBe(false)
    expect(left.length).toBeGreaterThan(0)
  })
})
