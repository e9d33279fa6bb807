import { needsService } from '@campus/shared/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { BASE, eventually, ingestDatabase, MINUTE, startIngest } from './support.ts'

/**
 * The service's writers side by side (INGEST_WRITERS, 2 by default): a datalogger's transaction
 * that waits holds up no other datalogger's. A held row lock needs a second session on the
 * database, hence a PostgreSQL server.
 */
describe.runIf(await needsService('writer lanes tests (a PostgreSQL server)', 'TEST_DATABASE_URL'))(
  'writers side by side',
  () => {
    const ready = ingestDatabase()
    afterAll(async () => (await ready).database.close())

    it("a datalogger whose write waits on a lock holds up no other datalogger's; both are committed and acknowledged", async () => {
      const { database } = await ready
      const ingest = await startIngest(database)
      // meter 900 is read by DL-DC-01, meter 931 by DL-METEO-01
      const send = (datalogger: string, meter: number, at: number) =>
        new Promise<void>((done) =>
          ingest.writer.submit(
            {
              source: `mqtt:campus/${datalogger}/senml`,
              datalogger,
              payload: Buffer.from(JSON.stringify([{ n: `urn:campus:meter:${meter}`, t: at / 1000, v: 5 }])),
              receivedMs: Date.now(),
            },
            done,
          ),
        )
      const stored = async (meter: number) =>
        Number(
          (await database.pool.query('select count(*) as n from meter_samples where meter_id = $1', [meter])).rows[0].n,
        )
      try {
        await Promise.all([send('DL-DC-01', 900, BASE), send('DL-METEO-01', 931, BASE)])
        // another session holds meter 900's latest row: the next write of DL-DC-01 waits for it
        const blocker = await database.pool.connect()
        try {
          await blocker.query('begin')
          await blocker.query('select 1 from meter_latest where meter_id = 900 for update')
          let datacenterDone = false
          const datacenter = send('DL-DC-01', 900, BASE + MINUTE).then(() => {
            datacenterDone = true
          })
          let weatherDone = false
          const weather = send('DL-METEO-01', 931, BASE + MINUTE).then(() => {
            weatherDone = true
          })
          await eventually(async () => weatherDone, "DL-METEO-01's message committed while DL-DC-01's waits")
          expect(await stored(931)).toBe(2)
          expect(datacenterDone).toBe(false)
          await blocker.query('rollback')
          await Promise.all([datacenter, weather])
          expect(await stored(900)).toBe(2)
        } finally {
          await blocker.query('rollback').catch(() => undefined)
          blocker.release()
        }
      } finally {
        await ingest.stop()
      }
    })
  },
)
