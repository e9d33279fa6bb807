/**
 * Approving an application while revoking its authorization (two tabs, on PostgreSQL with real
 * concurrency): whichever commits last wins, and the end state is whole. No consent left means
 * no usable code and no live token of that application for the user.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basic, exchangeCode, PASSWORD, seed, startServer, type TestServer } from '../helpers.ts'
import { getPage, signedIn, submit } from '../pages-helpers.ts'

describe('parallel consent and revoke', () => {
  let server: TestServer
  let fixtures: Awaited<ReturnType<typeof seed>>

  beforeAll(async () => {
    server = await startServer()
    fixtures = await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => server?.close())

  it('never leaves a code or token standing without the consent it came from', async () => {
    const browser = await signedIn(server.url, 'alice', PASSWORD)
    const csrf = (await getPage(browser, '/profile/applications')).csrf
    const redirectUri = 'https://client.example/cb'
    const outcomes = { approvedLast: 0, revokedLast: 0 }
    for (let round = 0; round < 12; round++) {
      const [approval] = await Promise.all([
        submit(browser, '/oauth/authorize', {
          csrf_token: csrf,
          client_id: fixtures.web.uid,
          redirect_uri: redirectUri,
          response_type: 'code',
          scope: 'read_user',
          state: `round-${round}`,
          decision: 'approve',
        }),
        submit(browser, `/profile/applications/authorized/${fixtures.web.id}/revoke`, { csrf_token: csrf }),
      ])
      expect(approval.status).toBe(303)
      const code = new URL(approval.location as string).searchParams.get('code') as string
      expect(code).toBeTruthy()

      const consent = await server.db
        .selectFrom('consents')
        .select('user_id')
        .where('user_id', '=', fixtures.alice.id)
        .where('application_id', '=', fixtures.web.id)
        .executeTakeFirst()
      const exchange = await exchangeCode(server.url, code, redirectUri, {
        authorization: basic(fixtures.web.uid, fixtures.web.secret),
      })
      const live = await sql<{ n: number }>`select count(*)::int as n from access_tokens
        where user_id = ${fixtures.alice.id} and application_id = ${fixtures.web.id} and revoked_at is null`.execute(
        server.db,
      )
      if (consent) {
        outcomes.approvedLast++
        expect(exchange.status).toBe(200)
      } else {
        outcomes.revokedLast++
        expect(exchange.status).toBe(400)
        expect(exchange.body.error).toBe('invalid_grant')
        expect(live.rows[0]?.n).toBe(0)
      }
      // start the next round from a clean slate
      await submit(browser, `/profile/applications/authorized/${fixtures.web.id}/revoke`, { csrf_token: csrf })
    }
    expect(outcomes.approvedLast + outcomes.revokedLast).toBe(12)
  })
})
