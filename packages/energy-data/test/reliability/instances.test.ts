import { randomBytes } from 'node:crypto'
import { needsService, type TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EnergyDatabase } from '../../src/db/schema.ts'
import { createApiKey, revokeApiKeys } from '../../src/repositories/api-keys.ts'
import { energyCli, type ServerProcess, startEnergyProcess, testDatabase } from '../harness.ts'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const LIMIT = 12

/** The admin command line, as an operator runs it, against the shared database: its JSON answer. */
async function cli(url: string, ...args: string[]): Promise<unknown> {
  const { code, stdout, stderr } = await energyCli(url, args)
  if (code !== 0) throw new Error(`pnpm energy ${args.join(' ')} exited ${code}: ${stderr}`)
  return JSON.parse(stdout)
}

describe.runIf(await needsService('two-instance tests (Redis)', 'REDIS_URL'))(
  'two instances on one database and one Redis',
  () => {
    let database: TestDatabase<EnergyDatabase>
    let a: ServerProcess
    let b: ServerProcess

    beforeAll(async () => {
      database = await testDatabase()
      // counters of this run only: a prefix no other run shares
      const env = {
        ENERGY_DATABASE_URL: database.url,
        REDIS_URL,
        ENERGY_RATE_LIMIT_PREFIX: `energy-rl-test-${randomBytes(6).toString('hex')}:`,
        ENERGY_RATE_LIMIT_KEY: String(LIMIT),
      }
      ;[a, b] = await Promise.all([startEnergyProcess(env), startEnergyProcess(env)])
    })
    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()])
      await database?.close()
    })

    const ask = (server: ServerProcess, key: string, path = '/auth/protected') =>
      fetch(`${server.url}${path}`, { headers: { 'x-api-key': key } })

    it('accepts at both a key created with the CLI or the repository, and refuses at both a key revoked by either', async () => {
      const created = (await cli(database.url, 'key:create', '--name', 'cli-key', '--endpoint', '*')) as {
        id: number
        key: string
      }
      const repo = await createApiKey(database.db, { name: 'repo-key', endpoints: ['*'] })
      for (const key of [created.key, repo.key]) {
        expect((await ask(a, key)).status).toBe(200)
        expect((await ask(b, key)).status).toBe(200)
      }

      await cli(database.url, 'key:revoke', '--id', String(created.id))
      const afterCli = [await ask(a, created.key), await ask(b, created.key)]
      expect(afterCli.map((r) => r.status)).toEqual([401, 401])
      expect(await afterCli[0]?.json()).toEqual({ detail: 'API key revoked' })

      await revokeApiKeys(database.db, { id: repo.record.id })
      expect([(await ask(b, repo.key)).status, (await ask(a, repo.key)).status]).toEqual([401, 401])
    })

    it('counts one key across both instances: 429 with Retry-After once the combined count passes the limit', async () => {
      const { key } = await createApiKey(database.db, { name: 'busy', endpoints: ['*'] })
      const statuses: number[] = []
      for (let i = 0; i < LIMIT; i++) statuses.push((await ask(i % 2 ? b : a, key)).status)
      expect(statuses).toEqual(Array(LIMIT).fill(200))
      // each instance alone has seen only half the limit: only the shared counter can refuse these
      for (const server of [a, b]) {
        const over = await ask(server, key)
        expect(over.status).toBe(429)
        expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
        expect(Object.keys((await over.json()) as object)).toEqual(['detail'])
      }
      // another key has its own count
      const other = await createApiKey(database.db, { name: 'other', endpoints: ['*'] })
      expect((await ask(a, other.key)).status).toBe(200)
    })
  },
)
