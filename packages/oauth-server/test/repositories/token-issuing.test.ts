/**
 * One statement writes token rows for every grant (password, refresh, implicit and code): only
 * digests are stored, the access token lives ACCESS_TOKEN_TTL by the database clock, a refresh
 * token belongs to its access token and grant; a refused code writes nothing.
 */
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ACCESS_TOKEN_TTL } from '../../src/domain/lifetimes.ts'
import { digest, generateSecret } from '../../src/domain/secrets.ts'
import { issueTokens, redeemCode } from '../../src/grants/issue.ts'
import { insertAuthorizationCode } from '../../src/repositories/codes.ts'
import { seed, startServer, type TestServer } from '../helpers.ts'

describe('issuing tokens', () => {
  let server: TestServer
  let data: Awaited<ReturnType<typeof seed>>

  beforeAll(async () => {
    server = await startServer({}, { listen: false })
    data = await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => server?.close())

  async function rowsOf(accessToken: string, refreshToken: string | undefined) {
    const access = await server.db
      .selectFrom('access_tokens')
      .selectAll()
      .select(sql<number>`extract(epoch from expires_at - created_at)::int`.as('lifetime'))
      .where('digest', '=', digest(accessToken))
      .executeTakeFirstOrThrow()
    const refresh = refreshToken
      ? await server.db
          .selectFrom('refresh_tokens')
          .selectAll()
          .where('digest', '=', digest(refreshToken))
          .executeTakeFirst()
      : undefined
    return { access, refresh }
  }

  it('for a grant: digests only, the access lifetime, the refresh token tied to its access token and grant', async () => {
    const grantId = randomUUID()
    const tokens = await issueTokens(server.db, {
      applicationId: data.web.id,
      userId: data.alice.id,
      scopes: ['api', 'read_user'],
      grantId,
      refresh: true,
    })
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL, scope: 'api read_user' })
    const { access, refresh } = await rowsOf(tokens.access_token, tokens.refresh_token)
    expect(access).toMatchObject({ application_id: data.web.id, user_id: data.alice.id, grant_id: grantId })
    expect(access.lifetime).toBe(ACCESS_TOKEN_TTL)
    expect(refresh).toMatchObject({ access_token_id: access.id, grant_id: grantId, scopes: ['api', 'read_user'] })
    const dump = JSON.stringify(await server.db.selectFrom('access_tokens').selectAll().execute())
    expect(dump).not.toContain(tokens.access_token)
  })

  it('without a client and without a refresh token', async () => {
    const tokens = await issueTokens(server.db, {
      applicationId: null,
      userId: data.alice.id,
      scopes: ['api'],
      grantId: randomUUID(),
      refresh: false,
    })
    expect(tokens.refresh_token).toBeUndefined()
    expect((await rowsOf(tokens.access_token, undefined)).access.application_id).toBeNull()
  })

  it('for a code: the same rows, from the code, in the statement that consumes it; once only', async () => {
    const code = digest(generateSecret('code'))
    const grantId = randomUUID()
    await insertAuthorizationCode(server.db, {
      digest: code,
      applicationId: data.web.id,
      userId: data.alice.id,
      redirectUri: 'https://client.example/cb',
      scopes: ['read_user'],
      codeChallenge: null,
      codeChallengeMethod: null,
      grantId,
      ttlSeconds: 600,
    })
    const attempt = {
      digest: code,
      applicationId: data.web.id,
      redirectUri: 'https://client.example/cb',
      verifier: null,
      verifierS256: null,
      dpopJkt: null,
    }
    const redeemed = await redeemCode(server.db, attempt, true)
    expect(redeemed?.code).toMatchObject({ userId: data.alice.id, scopes: ['read_user'] })
    const { access, refresh } = await rowsOf(redeemed?.response.access_token ?? '', redeemed?.response.refresh_token)
    expect(access).toMatchObject({ grant_id: grantId, scopes: ['read_user'] })
    expect(access.lifetime).toBe(ACCESS_TOKEN_TTL)
    expect(refresh?.access_token_id).toBe(access.id)
    const before = await server.db.selectFrom('access_tokens').select('id').execute()
    expect(await redeemCode(server.db, attempt, true)).toBeUndefined()
    expect(await server.db.selectFrom('access_tokens').select('id').execute()).toHaveLength(before.length)
  })
})
