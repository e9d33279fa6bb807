/**
 * Ended tokens are purged after OAUTH_TOKEN_RETENTION_DAYS, by the running server's sweep: what a
 * client may still use (a refresh token whose access token expired long ago, a rotated refresh
 * token whose reuse must still end its family) stays; what nobody can use any more goes.
 */
import { scrapeMetric } from '@campus/shared/testing'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPersonalAccessToken } from '../src/accounts.ts'
import { digest } from '../src/domain/secrets.ts'
import type { OAuthApp } from '../src/oauth-app.ts'
import { purgeEndedTokens } from '../src/repositories/token-purge.ts'
import { basic, issueToken, postForm, seed, startServer, type TestServer } from './helpers.ts'

let server: TestServer
let f: Awaited<ReturnType<typeof seed>>

beforeAll(async () => {
  server = await startServer({ tokenRetentionDays: 30 })
  f = await seed(server.db, server.settings.secretKey)
})
afterAll(async () => {
  await server?.close()
})

const DAY = 86_400_000
const daysAgo = (days: number) => new Date(Date.now() - days * DAY)

/** Moves an access token's expiry (and revocation) into the past, as time would. */
async function ageAccess(token: string, days: { expired: number; revoked?: number }) {
  await server.db
    .updateTable('access_tokens')
    .set({
      created_at: daysAgo(days.expired + 1),
      expires_at: daysAgo(days.expired),
      ...(days.revoked === undefined ? {} : { revoked_at: daysAgo(days.revoked) }),
    })
    .where('digest', '=', digest(token))
    .execute()
}

async function ageRefresh(token: string, set: { rotated_at?: Date; revoked_at?: Date }) {
  await server.db.updateTable('refresh_tokens').set(set).where('digest', '=', digest(token)).execute()
}

const exists = async (table: 'access_tokens' | 'refresh_tokens', token: string) =>
  (await server.db.selectFrom(table).select('id').where('digest', '=', digest(token)).executeTakeFirst()) !== undefined

const refresh = (token: string) =>
  postForm(
    server.url,
    '/oauth/token',
    { grant_type: 'refresh_token', refresh_token: token },
    { authorization: basic(f.web.uid, f.web.secret) },
  )

const metric = (kind: string) => scrapeMetric(server.url, 'oauth_tokens_purged_total', { kind })

describe('the purge of ended tokens (OAUTH_TOKEN_RETENTION_DAYS)', () => {
  it('deletes what ended before the retention, keeps what a client may still use, and counts it at /metrics', async () => {
    const issue = (refreshToo: boolean) =>
      issueToken(server, { applicationId: f.web.id, userId: f.alice.id, scopes: ['api'], refresh: refreshToo })
    // ended long ago, nothing hangs on it
    const oldExpired = await issue(false)
    await ageAccess(oldExpired.access_token, { expired: 40 })
    const oldRevoked = await issue(false)
    await ageAccess(oldRevoked.access_token, { expired: 35, revoked: 39 })
    // ended within the retention
    const recent = await issue(false)
    await ageAccess(recent.access_token, { expired: 5 })
    // an access token expired long ago whose refresh token is still usable: the client refreshes
    const longLived = await issue(true)
    await ageAccess(longLived.access_token, { expired: 40 })
    // a family refreshed long ago: its first pair ended before the retention
    const rotatedLongAgo = await issue(true)
    const rotatedLongAgoNext = await refresh(rotatedLongAgo.refresh_token as string)
    expect(rotatedLongAgoNext.status).toBe(200)
    await ageAccess(rotatedLongAgo.access_token, { expired: 45, revoked: 45 })
    await ageRefresh(rotatedLongAgo.refresh_token as string, { rotated_at: daysAgo(45) })
    // a family refreshed within the retention: reusing its rotated token must still end it
    const rotatedRecently = await issue(true)
    const rotatedRecentlyNext = await refresh(rotatedRecently.refresh_token as string)
    expect(rotatedRecentlyNext.status).toBe(200)
    await ageAccess(rotatedRecently.access_token, { expired: 40, revoked: 40 })
    await ageRefresh(rotatedRecently.refresh_token as string, { rotated_at: daysAgo(3) })
    // personal access tokens: revoked long ago, past their expiry date long ago, live
    const pat = (name: string, expiresAt?: string) =>
      createPersonalAccessToken(server.db, { userId: f.alice.id, name, scopes: ['api'], expiresAt })
    const patRevoked = await pat('revoked')
    await server.db
      .updateTable('personal_access_tokens')
      .set({ revoked_at: daysAgo(31) })
      .where('id', '=', patRevoked.id)
      .execute()
    const patExpired = await pat('expired')
    await server.db
      .updateTable('personal_access_tokens')
      .set({ expires_at: sql<string>`current_date - 40` })
      .where('id', '=', patExpired.id)
      .execute()
    const patLive = await pat('live', new Date(Date.now() + 30 * DAY).toISOString().slice(0, 10))

    const purged = await (server.app as unknown as OAuthApp).sweep()
    expect(purged).toEqual({ access_token: 3, refresh_token: 1, personal_access_token: 2 })
    expect(await metric('access_token')).toBe(3)
    expect(await metric('refresh_token')).toBe(1)
    expect(await metric('personal_access_token')).toBe(2)

    expect(await exists('access_tokens', oldExpired.access_token)).toBe(false)
    expect(await exists('access_tokens', oldRevoked.access_token)).toBe(false)
    expect(await exists('access_tokens', rotatedLongAgo.access_token)).toBe(false)
    expect(await exists('refresh_tokens', rotatedLongAgo.refresh_token as string)).toBe(false)
    expect(await exists('access_tokens', recent.access_token)).toBe(true)
    const pats = await server.db.selectFrom('personal_access_tokens').select('id').execute()
    expect(pats.map((row) => row.id)).toEqual([patLive.id])
    // the live family goes on: its current pair still refreshes
    expect((await refresh(rotatedLongAgoNext.body.refresh_token as string)).status).toBe(200)
    // a refresh token outlives its expired access token
    expect((await refresh(longLived.refresh_token as string)).status).toBe(200)
    // a rotated token within the retention is still known: its reuse ends the family
    const reuse = await refresh(rotatedRecently.refresh_token as string)
    expect([reuse.status, reuse.body.error]).toEqual([400, 'invalid_grant'])
    expect((await refresh(rotatedRecentlyNext.body.refresh_token as string)).status).toBe(400)
  })

  it('works in batches until none is left, and a second pass finds nothing', async () => {
    const tokens = await Promise.all(
      Array.from({ length: 7 }, () =>
        issueToken(server, { applicationId: f.other.id, userId: f.alice.id, scopes: ['api'] }),
      ),
    )
    for (const token of tokens) await ageAccess(token.access_token, { expired: 31 })
    expect(await purgeEndedTokens(server.db, 30, 2)).toEqual({
      access_token: 7,
      refresh_token: 0,
      personal_access_token: 0,
    })
    expect(await purgeEndedTokens(server.db, 30, 2)).toEqual({
      access_token: 0,
      refresh_token: 0,
      personal_access_token: 0,
    })
  })
})
