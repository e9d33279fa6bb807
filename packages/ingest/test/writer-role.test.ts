import { randomBytes } from 'node:crypto'
import { type EnergyDatabase, inTransaction, takeMessages } from '@campus/energy-data/live'
import { createDatabase, type Database } from '@campus/shared'
import { needsService } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BASE, ingestDatabase } from './support.ts'

/**
 * The ingest service's runtime role (a login role in `energy_writer`) writes measurements, their
 * rollups, samples and the quarantine, and nothing else. Only on a PostgreSQL server: roles are
 * what is being tested.
 */
describe.runIf(await needsService('writer role tests (a PostgreSQL server)', 'TEST_DATABASE_URL'))(
  'runtime database role energy_writer',
  () => {
    const role = `energy_ingest_${randomBytes(4).toString('hex')}`
    let owner: Awaited<ReturnType<typeof ingestDatabase>>['database']
    let writer: Database<EnergyDatabase>

    beforeAll(async () => {
      owner = (await ingestDatabase()).database
      await owner.pool.query(`create role ${role} login in role energy_writer`)
      const url = new URL(owner.url)
      url.username = role
      url.password = ''
      writer = createDatabase<EnergyDatabase>(url.toString(), { max: 2 })
    })

    afterAll(async () => {
      await writer?.close()
      await owner?.close()
      const admin = createDatabase(process.env.TEST_DATABASE_URL as string, { max: 1 })
      await admin.pool.query(`drop role if exists ${role}`)
      await admin.close()
    })

    it('takes a message: samples, quarter hours, a mirrored column, rollups, the quarantine', async () => {
      const pack = JSON.stringify([
        { n: 'urn:campus:meter:900', t: BASE / 1000, v: 31.5 },
        { n: 'urn:campus:meter:999', t: BASE / 1000, v: 1 },
      ])
      const result = await inTransaction(writer.pool, (c) =>
        takeMessages(c, [{ source: 'test', payload: Buffer.from(pack), receivedMs: Date.now() }]),
      )
      expect(result).toMatchObject({ samples: 1, quarantined: 1 })
      const mirrored = await owner.pool.query('select tot_dc from datacenter_1_15m where time_15m = $1', [
        new Date(BASE),
      ])
      expect(mirrored.rows[0].tot_dc).toBe(31.5)
    })

    it('writes the virtual meters its meters feed, at the same quarter hours', async () => {
      await owner.pool.query(
        `insert into meters (id, description, datalogger_id, unit_id, quantity_id) values (1900, '1900) dc', null, 'unit:KiloW', 'quantitykind:Power');
         insert into virtual_meters (id, formula, kind) values (1900, '0.5*900 + 901', 'power');
         insert into virtual_meter_terms (virtual_id, input_id, coefficient) values (1900, 900, 0.5), (1900, 901, 1)`,
      )
      const at = BASE + 3_600_000
      const pack = JSON.stringify([
        { n: 'urn:campus:meter:900', t: at / 1000, v: 40 },
        { n: 'urn:campus:meter:901', t: at / 1000, v: 12.5 },
      ])
      await inTransaction(writer.pool, (c) =>
        takeMessages(c, [{ source: 'test', payload: Buffer.from(pack), receivedMs: Date.now() }]),
      )
      const virtual = await owner.pool.query(
        'select avg_value, sum_value, tag from data_15m where meter_id = 1900 and time_15m = $1',
        [new Date(at)],
      )
      expect(virtual.rows).toEqual([{ avg_value: 32.5, sum_value: null, tag: 'ok' }])
    })

    it('cannot change the metadata or the keys', async () => {
      await expect(writer.pool.query('delete from meters')).rejects.toThrow(/permission denied/)
      await expect(writer.pool.query('update api_keys set revoked_at = null')).rejects.toThrow(/permission denied/)
      await expect(writer.pool.query('delete from seed_runs')).rejects.toThrow(/permission denied/)
    })
  },
)
