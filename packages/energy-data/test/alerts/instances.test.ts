/**
 * Alerts on a PostgreSQL server, as deployed: a commit of the write path evaluates at once (its
 * change notice, no timer), `GET /alerts/stream` tells a listening client, two instances on one
 * database evaluate one at a time (an advisory lock) and raise each alert once, and the runtime
 * role (energy_reader) may keep the alerts without being able to touch a measurement.
 */
import { randomBytes } from 'node:crypto'
import { createDatabase } from '@campus/shared'
import { needsService } from '@campus/shared/testing'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.ts'
import { defaultSettings } from '../../src/config.ts'
import type { EnergyDatabase } from '../../src/db/schema.ts'
import type { EnergyApp } from '../../src/energy-app.ts'
import { takeMessages } from '../../src/repositories/sample-writes.ts'
import { inTransaction } from '../../src/repositories/transaction.ts'
import { type Harness, seeded, startHarness } from '../harness.ts'

describe.runIf(await needsService('alerts on a PostgreSQL server', 'TEST_DATABASE_URL'))(
  'alerts across instances, on the change notice',
  () => {
    const role = `energy_alerts_${randomBytes(4).toString('hex')}`
    // only commits (and the explicit ticks) evaluate: the timer is an hour away
    const settings = { alerts: { ...defaultSettings().alerts, evaluationMs: 3_600_000 } }
    let h: Harness
    let second: FastifyInstance | undefined
    let secondDb: ReturnType<typeof createDatabase<EnergyDatabase>> | undefined

    const engine = (app: FastifyInstance) => (app as unknown as EnergyApp).alerts
    const sample = (dl: string, meter: number, unit: string) => {
      const at = Date.now()
      const pack = JSON.stringify([{ n: `urn:campus:meter:${meter}`, t: at / 1000 - 1, v: 1, u: unit }])
      return inTransaction(h.database.pool, (client) =>
        takeMessages(client, [
          { source: `mqtt:campus/${dl}/senml`, datalogger: dl, payload: Buffer.from(pack), receivedMs: at },
        ]),
      )
    }

    beforeAll(async () => {
      // the app connects as a login role in energy_reader, as a deployment does
      h = await startHarness({
        data: seeded({ from: '2025-01-01', to: '2025-01-02', seed: '8' }),
        settings,
        listen: true,
        async connect(owner) {
          await sql.raw(`create role ${role} login in role energy_reader`).execute(owner.db)
          const url = new URL(owner.url)
          url.username = role
          url.password = ''
          return createDatabase<EnergyDatabase>(url.toString(), { max: 4 })
        },
      })
      secondDb = createDatabase<EnergyDatabase>(h.served.url, { max: 4 })
      second = await buildApp({ database: secondDb, settings: defaultSettings(settings) })
      await second.ready()
    })

    afterAll(async () => {
      await second?.close()
      await secondDb?.close()
      await h?.close()
      const admin = createDatabase(process.env.TEST_DATABASE_URL as string, { max: 1 })
      await sql.raw(`drop role if exists ${role}`).execute(admin.db)
      await admin.close()
    })

    it('two instances evaluating at once raise each alert once', async () => {
      const key = await h.key(['/alerts/*'])
      const created = await h.app.inject({
        method: 'POST',
        url: '/alerts/rules',
        headers: { 'x-api-key': key },
        payload: { kind: 'stale', name: 'cf_silent', datalogger: 'DL-CF-01', minutes: 1 },
      })
      expect(created.statusCode).toBe(201)
      const other = second as FastifyInstance
      await Promise.all([engine(h.app).tick(), engine(other).tick(), engine(h.app).tick(), engine(other).tick()])
      const { rows } = await h.database.pool.query(`select state from alerts where rule_name = 'cf_silent'`)
      expect(rows).toEqual([{ state: 'firing' }])
    })

    it('a commit of the write path resolves it at once, and /alerts/stream tells a client whichever instance evaluated', async () => {
      const reader = await h.key(['*'])
      const controller = new AbortController()
      const response = await fetch(`${h.base}/alerts/stream`, {
        headers: { 'x-api-key': reader },
        signal: controller.signal,
      })
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toContain('text/event-stream')
      const reader_ = (response.body as ReadableStream<Uint8Array>).getReader()
      let text = ''
      const read = async (until: (text: string) => boolean) => {
        while (!until(text)) {
          const { value, done } = await reader_.read()
          if (done) break
          text += Buffer.from(value).toString('utf8')
        }
      }
      await read((t) => t.includes('event: snapshot'))
      expect(text).toContain('"rule":"cf_silent"')
      // a sample of one of its meters: the change notice evaluates, no tick asked for
      const written = await sample('DL-CF-01', 910, 'kW')
      expect(written.refused).toEqual([])
      await read((t) => /event: alert\ndata: .*"rule":"cf_silent".*"state":"resolved"/.test(t))
      controller.abort()
      const { rows } = await h.database.pool.query(`select state from alerts where rule_name = 'cf_silent'`)
      expect(rows).toEqual([{ state: 'resolved' }])
    }, 30_000)

    it("an alert the other instance evaluated reaches this instance's stream (its notice, not a timer)", async () => {
      const response = await fetch(`${h.base}/alerts/stream`, { headers: { 'x-api-key': await h.key(['*']) } })
      const reader = (response.body as ReadableStream<Uint8Array>).getReader()
      let text = ''
      const read = async (until: (text: string) => boolean) => {
        while (!until(text)) {
          const { value, done } = await reader.read()
          if (done) break
          text += Buffer.from(value).toString('utf8')
        }
      }
      await read((t) => t.includes('event: snapshot'))
      // created through the second instance, which evaluates it; this one's timer is an hour away
      const created = await (second as FastifyInstance).inject({
        method: 'POST',
        url: '/alerts/rules',
        headers: { 'x-api-key': await h.key(['/alerts/*']) },
        payload: { kind: 'stale', name: 'meteo_silent', datalogger: 'DL-METEO-01', minutes: 1 },
      })
      expect(created.statusCode).toBe(201)
      await read((t) => /event: alert\ndata: .*"rule":"meteo_silent".*"state":"firing"/.test(t))
      await reader.cancel()
    }, 30_000)

    it('the runtime role keeps alerts but still cannot write a measurement', async () => {
      await expect(sql`delete from data_15m`.execute(h.served.db)).rejects.toThrow(/permission denied/)
      await expect(sql`select count(*) from alerts`.execute(h.served.db)).resolves.toBeDefined()
    })
  },
)
