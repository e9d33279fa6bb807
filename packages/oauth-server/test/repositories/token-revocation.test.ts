/**
 * A refresh token belongs where the access token issued with it belongs: revoking a grant or a
 * user's authorization of an application reaches it through that access token (also one revoked
 * on its own before), and deleting the application or the user deletes it with the access token.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { digest } from '../../src/domain/secrets.ts'
import { issueTokens, type TokenResponse } from '../../src/grants/issue.ts'
import type { OAuthApp } from '../../src/oauth-app.ts'
import { revokeAuthorization } from '../../src/repositories/consents.ts'
import { revokeAccessToken, revokeGrant } from '../../src/repositories/tokens.ts'
import { seed, startServer, type TestServer } from '../helpers.ts'

describe('revoking and deleting tokens', () => {
  let server: TestServer
  let data: Awaited<ReturnType<typeof seed>>

  beforeAll(async () => {
    server = await startServer({}, { listen: false })
    data = await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => server?.close())

  const changes = () => (server.app as OAuthApp).changes
  const issue = (applicationId: number, userId: number, grantId = randomUUID()) =>
    issueTokens(server.db, { applicationId, userId, scopes: ['api'], grantId, refresh: true })

  /** Each of the pair: 'live', 'revoked', or 'gone' (no row). */
  async function state(tokens: TokenResponse) {
    const of = async (table: 'access_tokens' | 'refresh_tokens', token: string | undefined) => {
      const row = await server.db
        .selectFrom(table)
        .select('revoked_at')
        .where('digest', '=', digest(token ?? ''))
        .executeTakeFirst()
      return row ? (row.revoked_at ? 'revoked' : 'live') : 'gone'
    }
    return {
      access: await of('access_tokens', tokens.access_token),
      refresh: await of('refresh_tokens', tokens.refresh_token),
    }
  }

  const idOf = async (tokens: TokenResponse) =>
    (
      await server.db
        .selectFrom('access_tokens')
        .select('id')
        .where('digest', '=', digest(tokens.access_token))
        .executeTakeFirstOrThrow()
    ).id

  it("a grant's revocation ends every pair of it, also a refresh token whose access token was revoked alone", async () => {
    const grantId = randomUUID()
    const first = await issue(data.web.id, data.alice.id, grantId)
    const second = await issue(data.web.id, data.alice.id, grantId)
    const otherGrant = await issue(data.web.id, data.alice.id)
    const firstId = await idOf(first)
    await changes().commit((trx) => revokeAccessToken(trx, firstId))
    // revoking an access token by itself leaves its refresh token usable (RFC 7009 2.1 leaves it open)
    expect(await state(first)).toEqual({ access: 'revoked', refresh: 'live' })

    await changes().commit((trx) => revokeGrant(trx, grantId))
    expect(await state(first)).toEqual({ access: 'revoked', refresh: 'revoked' })
    expect(await state(second)).toEqual({ access: 'revoked', refresh: 'revoked' })
    expect(await state(otherGrant)).toEqual({ access: 'live', refresh: 'live' })
  })

  it("a user's revocation of an application's authorization ends that user's pairs for it, no others", async () => {
    const ended = await issue(data.spa.id, data.alice.id)
    const otherApplication = await issue(data.other.id, data.alice.id)
    const otherUser = await issue(data.spa.id, data.bob.id)
    await changes().commit((trx) => revokeAuthorization(trx, data.alice.id, data.spa.id))
    expect(await state(ended)).toEqual({ access: 'revoked', refresh: 'revoked' })
    expect(await state(otherApplication)).toEqual({ access: 'live', refresh: 'live' })
    expect(await state(otherUser)).toEqual({ access: 'live', refresh: 'live' })
  })

  it('deleting an application or a user deletes their refresh tokens with their access tokens', async () => {
    const ofWeb = await issue(data.web.id, data.alice.id)
    const ofBob = await issue(data.other.id, data.bob.id)
    const kept = await issue(data.other.id, data.alice.id)
    await server.db.deleteFrom('applications').where('id', '=', data.web.id).execute()
    expect(await state(ofWeb)).toEqual({ access: 'gone', refresh: 'gone' })
    expect(await state(ofBob)).toEqual({ access: 'live', refresh: 'live' })
    await server.db.deleteFrom('users').where('id', '=', data.bob.id).execute()
    expect(await state(ofBob)).toEqual({ access: 'gone', refresh: 'gone' })
    expect(await state(kept)).toEqual({ access: 'live', refresh: 'live' })
  })
})
