/**
 * RFC 6749 4.1.3, RFC 7636 4.6, RFC 9700 4.8.2: the rules that bind a code to its request are
 * written once, in SQL; the redemption and the explanation of a refusal both read them. For
 * every kind of code and of attempt: a redemption succeeds exactly when every rule holds, and
 * each rule says what the RFCs say (checked against plain comparisons and RFC 7636's S256).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ACCESS_TOKEN_TTL } from '../../src/domain/lifetimes.ts'
import { s256, verifierMatches } from '../../src/domain/pkce.ts'
import { digest, generateSecret } from '../../src/domain/secrets.ts'
import { redeemCode } from '../../src/grants/issue.ts'
import {
  type CodeAttempt,
  checkAuthorizationCode,
  insertAuthorizationCode,
  redeemAuthorizationCodes,
} from '../../src/repositories/codes.ts'
import { seed, startServer, type TestServer } from '../helpers.ts'

const REDIRECT = 'https://client.example/cb'
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
const OTHER_VERIFIER = 'x'.repeat(43)
/** JWK thumbprints (RFC 7638) of two DPoP keys */
const KEY = 'k'.repeat(43)
const OTHER_KEY = 'o'.repeat(43)

interface CodeKind {
  name: string
  challenge: string | null
  method: 'S256' | 'plain' | null
  ttlSeconds: number
  used: boolean
  /** RFC 9449 10: the DPoP key the code was requested for */
  jkt?: string
}

const CODES: CodeKind[] = [
  { name: 'S256 challenge', challenge: s256(VERIFIER), method: 'S256', ttlSeconds: 600, used: false },
  { name: 'plain challenge', challenge: VERIFIER, method: 'plain', ttlSeconds: 600, used: false },
  { name: 'no challenge', challenge: null, method: null, ttlSeconds: 600, used: false },
  { name: 'expired', challenge: s256(VERIFIER), method: 'S256', ttlSeconds: -1, used: false },
  { name: 'already used', challenge: null, method: null, ttlSeconds: 600, used: true },
  { name: 'bound to a DPoP key', challenge: s256(VERIFIER), method: 'S256', ttlSeconds: 600, used: false, jkt: KEY },
]

const ATTEMPTS: Array<{
  name: string
  client: 'own' | 'other'
  redirect: string
  verifier: string | null
  jkt?: string
}> = [
  { name: 'as requested', client: 'own', redirect: REDIRECT, verifier: VERIFIER },
  { name: 'with a DPoP proof of the key', client: 'own', redirect: REDIRECT, verifier: VERIFIER, jkt: KEY },
  { name: 'with a DPoP proof of another key', client: 'own', redirect: REDIRECT, verifier: VERIFIER, jkt: OTHER_KEY },
  { name: 'without verifier', client: 'own', redirect: REDIRECT, verifier: null },
  { name: 'another verifier', client: 'own', redirect: REDIRECT, verifier: OTHER_VERIFIER },
  { name: 'another redirect URI', client: 'own', redirect: `${REDIRECT}/x`, verifier: VERIFIER },
  { name: 'another client', client: 'other', redirect: REDIRECT, verifier: VERIFIER },
]

describe('code binding: the SQL rules and the explanation of a refusal agree', () => {
  let server: TestServer
  let data: Awaited<ReturnType<typeof seed>>

  beforeAll(async () => {
    server = await startServer({}, { listen: false })
    data = await seed(server.db, server.settings.secretKey)
  })
  afterAll(async () => server?.close())

  async function newCode(kind: CodeKind): Promise<Buffer> {
    const code = digest(generateSecret('code'))
    await insertAuthorizationCode(server.db, {
      digest: code,
      applicationId: data.web.id,
      userId: data.alice.id,
      redirectUri: REDIRECT,
      scopes: ['api'],
      codeChallenge: kind.challenge,
      codeChallengeMethod: kind.method,
      grantId: randomUUID(),
      ttlSeconds: kind.ttlSeconds,
      dpopJkt: kind.jkt ?? null,
    })
    if (kind.used) {
      await server.db
        .updateTable('authorization_codes')
        .set({ consumed_at: new Date() })
        .where('digest', '=', code)
        .execute()
    }
    return code
  }

  /** A new code of `kind`, and `attempt` at redeeming it. */
  async function attemptOn(kind: CodeKind, attempt: (typeof ATTEMPTS)[number]): Promise<CodeAttempt> {
    return {
      digest: await newCode(kind),
      applicationId: attempt.client === 'own' ? data.web.id : data.other.id,
      redirectUri: attempt.redirect,
      verifier: attempt.verifier,
      verifierS256: attempt.verifier === null ? null : s256(attempt.verifier),
      dpopJkt: attempt.jkt ?? null,
    }
  }

  for (const kind of CODES) {
    for (const attempt of ATTEMPTS) {
      it(`${kind.name}, redeemed ${attempt.name}`, async () => {
        const code = await attemptOn(kind, attempt)
        const checked = await checkAuthorizationCode(server.db, code)
        expect(checked).toBeDefined()
        const rules = checked?.rules ?? {}
        // each rule as the RFCs state it, computed here without SQL
        expect(rules).toEqual({
          unused: !kind.used,
          live: kind.ttlSeconds > 0,
          client: attempt.client === 'own',
          redirect_uri: attempt.redirect === REDIRECT,
          verifier_sent: kind.challenge === null || attempt.verifier !== null,
          verifier_matches:
            kind.challenge === null ||
            attempt.verifier === null ||
            verifierMatches(attempt.verifier, kind.challenge, kind.method ?? 'plain'),
          challenge_made: kind.challenge !== null || attempt.verifier === null,
          dpop_key: kind.jkt === undefined || kind.jkt === attempt.jkt,
        })
        // the redemption goes through exactly when every rule holds
        const redeemed = await redeemCode(server.db, code, false)
        expect(redeemed !== undefined).toBe(Object.values(rules).every(Boolean))
      })
    }
  }

  it('every kind of code and attempt at once, redeemed by one statement (group commit): the same outcomes', async () => {
    const batch: Array<{ attempt: CodeAttempt; expected: boolean }> = []
    for (const kind of CODES) {
      for (const attempt of ATTEMPTS) {
        const code = await attemptOn(kind, attempt)
        const checked = await checkAuthorizationCode(server.db, code)
        batch.push({ attempt: code, expected: Object.values(checked?.rules ?? { none: false }).every(Boolean) })
      }
    }
    // one code twice in the batch: consumed once
    const twice = batch.find((b) => b.expected) as (typeof batch)[number]
    batch.push({ attempt: twice.attempt, expected: false })
    const tokens = batch.map(() => ({
      accessDigest: digest(generateSecret('accessToken')),
      refreshDigest: digest(generateSecret('refreshToken')),
      ttlSeconds: ACCESS_TOKEN_TTL,
      accessJkt: null,
      refreshJkt: null,
    }))
    const redeemed = await redeemAuthorizationCodes(
      server.db,
      batch.map((b, i) => ({ attempt: b.attempt, tokens: tokens[i] as (typeof tokens)[number] })),
    )
    expect(redeemed.map((r) => r !== undefined)).toEqual(batch.map((b) => b.expected))
    // each redeemed attempt got its own access and refresh token, tied together, for its own code's user
    for (const [i, r] of redeemed.entries()) {
      if (!r) continue
      const access = await server.db
        .selectFrom('access_tokens')
        .select(['id', 'user_id', 'application_id'])
        .where('digest', '=', tokens[i]?.accessDigest as Buffer)
        .executeTakeFirstOrThrow()
      expect([access.user_id, access.application_id, r.userId]).toEqual([data.alice.id, data.web.id, data.alice.id])
      const refresh = await server.db
        .selectFrom('refresh_tokens')
        .select('access_token_id')
        .where('digest', '=', tokens[i]?.refreshDigest as Buffer)
        .executeTakeFirstOrThrow()
      expect(refresh.access_token_id).toBe(access.id)
    }
  })

  it('a code nobody issued has nothing to explain', async () => {
    const unknown = {
      digest: digest('nope'),
      applicationId: data.web.id,
      redirectUri: REDIRECT,
      verifier: null,
      verifierS256: null,
      dpopJkt: null,
    }
    expect(await checkAuthorizationCode(server.db, unknown)).toBeUndefined()
    expect(await redeemCode(server.db, unknown, false)).toBeUndefined()
  })
})
