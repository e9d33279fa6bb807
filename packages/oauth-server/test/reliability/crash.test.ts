/**
 * The embedded default killed outright: a real oauth-server process on a PGlite directory (what
 * `npm start` runs) is sent SIGKILL at a random moment while clients refresh tokens, each refresh
 * one transaction (the old refresh token rotated, its access token revoked, a new pair written).
 * Started again on the same directory it must open, hold every pair a client was answered with,
 * and no rotation half done: each family has exactly one usable refresh token.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { launchService, openServiceDatabase, type RunningService, type ServiceDatabase } from '@campus/shared'
import { afterAll, describe, expect, it } from 'vitest'
import type { OAuthDB } from '../../src/db/schema.ts'
import { digest } from '../../src/domain/secrets.ts'
import { issueTokens, newGrantId } from '../../src/grants/issue.ts'
import { oauthService } from '../../src/service.ts'
import { basic, postForm, seed } from '../helpers.ts'

const KILLS = 4
const FAMILIES = 4
const dir = mkdtempSync(join(tmpdir(), 'oauth-crash-'))
const secretKey = randomBytes(32)
const env = { DATA_DIR: dir, LOG_LEVEL: 'warn', OAUTH_SECRET_KEY: secretKey.toString('hex') }

const start = () => launchService(oauthService, { env, inheritEnv: false, timeoutMs: 60_000 })
const open = () => openServiceDatabase<OAuthDB>({ service: oauthService.name, dataDir: dir })

let server: RunningService | undefined
afterAll(async () => {
  await server?.stop('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

interface Family {
  grantId: string
  refresh: string
  /** Every access token a client was answered with. */
  acknowledged: string[]
}

describe('SIGKILL of a server on the embedded database, in the middle of writes', () => {
  it('reopens with every acknowledged token present and no rotation half done', async () => {
    server = await start()
    let database: ServiceDatabase<OAuthDB> = await open()
    const { web, alice } = await seed(database.db, secretKey)
    await database.close()
    const summary: string[] = []

    for (let kill = 0; kill < KILLS; kill++) {
      database = await open()
      const families: Family[] = []
      for (let i = 0; i < FAMILIES; i++) {
        const grantId = newGrantId()
        const issued = await issueTokens(database.db, {
          applicationId: web.id,
          userId: alice.id,
          scopes: ['api'],
          grantId,
          refresh: true,
        })
        families.push({ grantId, refresh: issued.refresh_token as string, acknowledged: [issued.access_token] })
      }
      await database.close()

      // each family refreshed one after another until the server is gone
      const running = server as RunningService
      const refreshing = families.map(async (family) => {
        for (;;) {
          const answer = await postForm(
            running.url,
            '/oauth/token',
            { grant_type: 'refresh_token', refresh_token: family.refresh },
            { authorization: basic(web.uid, web.secret) },
          ).catch(() => undefined)
          if (answer === undefined) return
          expect(answer.status).toBe(200)
          family.refresh = answer.body.refresh_token as string
          family.acknowledged.push(answer.body.access_token as string)
        }
      })
      const after = 200 + Math.floor(Math.random() * 1300)
      await new Promise((resolve) => setTimeout(resolve, after))
      running.child.kill('SIGKILL')
      await running.exited
      await Promise.all(refreshing)

      server = await start()
      database = await open()
      let acknowledged = 0
      for (const family of families) {
        const stored = await database.db
          .selectFrom('access_tokens')
          .select('digest')
          .where('digest', 'in', family.acknowledged.map(digest))
          .execute()
        expect(stored.length).toBe(family.acknowledged.length)
        acknowledged += stored.length
        // a rotation is whole or absent: one refresh token of the family is still usable
        const usable = await database.db
          .selectFrom('refresh_tokens as r')
          .innerJoin('access_tokens as a', 'a.id', 'r.access_token_id')
          .select('r.id')
          .where('a.grant_id', '=', family.grantId)
          .where('r.rotated_at', 'is', null)
          .where('r.revoked_at', 'is', null)
          .execute()
        expect(usable.length).toBe(1)
      }
      await database.close()
      summary.push(`kill after ${after} ms: ${acknowledged} acknowledged tokens present`)
    }
    process.stdout.write(`oauth crash (embedded, SIGKILL x${KILLS}): ${summary.join('; ')}\n`)
  })
})
