import { randomBytes } from 'node:crypto'
import { createDatabase } from '@campus/shared'
import { needsService } from '@campus/shared/testing'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EnergyDatabase } from '../src/db/schema.ts'
import { createApiKey } from '../src/repositories/api-keys.ts'
import { type Harness, startHarness } from './harness.ts'

/**
 * The service's runtime role (a login role in `energy_reader`) reads everything and writes
 * nothing but key bookkeeping. Only on a PostgreSQL server: roles are what is being tested.
 */
describe.runIf(await needsService('runtime role tests (a PostgreSQL server)', 'TEST_DATABASE_URL'))(
  'runtime database role energy_reader',
  () => {
    const role = `energy_api_${randomBytes(4).toString('hex')}`
    let h: Harness

    beforeAll(async () => {
      // the app connects as a login role in energy_reader; the harness's own connection is the owner's
      h = await startHarness({
        async connect(owner) {
          await sql.raw(`create role ${role} login in role energy_reader`).execute(owner.db)
          const url = new URL(owner.url)
          url.username = role
          url.password = ''
          return createDatabase<EnergyDatabase>(url.toString(), { max: 2 })
        },
      })
    })

    afterAll(async () => {
      await h?.close()
      const admin = createDatabase(process.env.TEST_DATABASE_URL as string, { max: 1 })
      await sql.raw(`drop role if exists ${role}`).execute(admin.db)
      await admin.close()
    })

    it('cannot change measurements, metadata or keys', async () => {
      const { db } = h.served
      await expect(sql`insert into pv_15m (time_15m, tot_pv) values (now(), 1)`.execute(db)).rejects.toThrow(
        /permission denied/,
      )
      await expect(sql`delete from meters`.execute(db)).rejects.toThrow(/permission denied/)
      await expect(sql`update api_keys set revoked_at = null`.execute(db)).rejects.toThrow(/permission denied/)
      await expect(sql`drop table data_15m`.execute(db)).rejects.toThrow(/must be owner|permission denied/)
    })

    it('serves keyed requests, recording key use', async () => {
      const { key, record } = await createApiKey(h.db, { name: 'reader-role', endpoints: ['*'] })
      const response = await h.app.inject({ url: '/metadata/meters/', headers: { 'x-api-key': key } })
      expect(response.statusCode).toBe(200)
      expect(Array.isArray(response.json())).toBe(true)
      // the bookkeeping is written after the answer, off the request's path
      let used: Date | null = null
      for (let i = 0; i < 50 && !used; i++) {
        const row = await h.db
          .selectFrom('api_keys')
          .select('last_used_at')
          .where('id', '=', record.id)
          .executeTakeFirstOrThrow()
        used = row.last_used_at
        if (!used) await new Promise((r) => setTimeout(r, 100))
      }
      expect(used).toBeInstanceOf(Date)
    })
  },
)
