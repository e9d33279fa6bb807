import type { Database } from '@campus/shared'
import type { TestDatabase } from '@campus/shared/testing'
import { approve } from '../../src/authorization/response.ts'
import type { OAuthDB } from '../../src/db/schema.ts'
import { basic, exchangeCode, type seed } from '../helpers.ts'

const REDIRECT_URI = 'https://client.example/cb'

/** A code for alice and the web application, issued straight into the database as consent would. */
export async function newCode(
  database: TestDatabase<OAuthDB>,
  data: Awaited<ReturnType<typeof seed>>,
): Promise<string> {
  const location = await approve(
    database.db,
    {
      client: data.web,
      redirectUri: REDIRECT_URI,
      responseType: 'code',
      scopes: ['api'],
      state: undefined,
      codeChallenge: undefined,
      codeChallengeMethod: undefined,
      nonce: undefined,
      dpopJkt: undefined,
      pushed: undefined,
    },
    data.alice.id,
    'http://127.0.0.1',
  )
  return new URL(location).searchParams.get('code') as string
}

/** A fresh token pair for alice: a code issued straight into the database, redeemed at `base`. */
export async function issueCode(
  database: TestDatabase<OAuthDB>,
  data: Awaited<ReturnType<typeof seed>>,
  base: string,
): Promise<{ access_token: string; refresh_token: string }> {
  const code = await newCode(database, data)
  const token = await exchangeCode(base, code, REDIRECT_URI, { authorization: basic(data.web.uid, data.web.secret) })
  if (token.status !== 200) throw new Error(`code exchange failed: ${JSON.stringify(token.body)}`)
  return token.body as { access_token: string; refresh_token: string }
}

/** Redemption statements waiting for a row lock (another connection's) inside the database. */
export async function redemptionsWaiting(database: Database<OAuthDB>): Promise<number> {
  const { rows } = await database.pool.query(
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and query like '%authorization_codes%'`,
  )
  return rows[0].n
}

/** Polls `check` every 25 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = performance.now()
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 25))
  }
  return performance.now() - started
}
