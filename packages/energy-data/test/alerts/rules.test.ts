/**
 * Alert rules and their evaluation: the API's and the command line's checks, the guards (a key
 * with an `/alerts/` pattern), and each kind's condition through pending, firing and resolved
 * with Prometheus's `for` semantics, on a clock the test moves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultSettings } from '../../src/config.ts'
import { QUARTER_MS } from '../../src/domain/time.ts'
import type { EnergyApp } from '../../src/energy-app.ts'
import { takeMessages } from '../../src/repositories/sample-writes.ts'
import { inTransaction } from '../../src/repositories/transaction.ts'
import { energyCli, type Harness, insertMeterReadings, seeded, startHarness } from '../harness.ts'

const START = Math.floor(Date.now() / QUARTER_MS) * QUARTER_MS - 40 * 86_400_000
let clock = START
let h: Harness
let manage: string
let reader: string

/** One SenML pack from datalogger `dl` for `meter`, arriving at `at` (the clock). */
async function sample(dl: string, meter: number, value: number, unit: string, at = clock) {
  const pack = JSON.stringify([{ n: `urn:campus:meter:${meter}`, t: at / 1000 - 1, v: value, u: unit }])
  return inTransaction(h.database.pool, (client) =>
    takeMessages(client, [
      { source: `mqtt:campus/${dl}/senml`, datalogger: dl, payload: Buffer.from(pack), receivedMs: at },
    ]),
  )
}

async function alertsOf(rule: string) {
  const answer = await h.app.inject({ url: `/alerts?rule=${rule}`, headers: { 'x-api-key': reader } })
  expect(answer.statusCode).toBe(200)
  return answer.json().alerts as Array<{ state: string; labels: Record<string, string>; value: number | null }>
}

async function createRule(body: object, key = manage) {
  return h.app.inject({ method: 'POST', url: '/alerts/rules', headers: { 'x-api-key': key }, payload: body })
}

/** One evaluation and delivery, now. */
const tick = () => (h.app as unknown as EnergyApp).alerts.tick()

beforeAll(async () => {
  h = await startHarness({
    data: seeded({ from: '2025-01-01', to: '2025-01-02', seed: '3' }),
    // only the ticks the tests ask for
    settings: { alerts: { ...defaultSettings().alerts, evaluationMs: 3_600_000 } },
    now: () => clock,
  })
  manage = await h.key(['/alerts/*'], 'alerts')
  reader = await h.key(['*'], 'reader')
})

afterAll(async () => {
  await h?.close()
})

describe('alert rules (POST /alerts/rules, GET, DELETE)', () => {
  it('a key with an /alerts/ pattern creates, lists and deletes; a reading key may not create', async () => {
    expect((await createRule({ kind: 'stale', datalogger: 'DL-CIT-01', minutes: 5 }, reader)).statusCode).toBe(403)
    const created = await createRule({ kind: 'stale', name: 'cit_silent', datalogger: 'DL-CIT-01', minutes: 5 })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toMatchObject({ name: 'cit_silent', kind: 'stale', params: { minutes: 5 }, for_seconds: 0 })
    expect(
      (await createRule({ kind: 'stale', name: 'cit_silent', datalogger: 'DL-CIT-01', minutes: 5 })).statusCode,
    ).toBe(409)
    const list = await h.app.inject({ url: '/alerts/rules', headers: { 'x-api-key': reader } })
    expect(list.json().rules.map((r: { name: string }) => r.name)).toContain('cit_silent')
    const id = created.json().id
    expect(
      (await h.app.inject({ method: 'DELETE', url: `/alerts/rules/${id}`, headers: { 'x-api-key': reader } }))
        .statusCode,
    ).toBe(403)
    expect(
      (await h.app.inject({ method: 'DELETE', url: `/alerts/rules/${id}`, headers: { 'x-api-key': manage } }))
        .statusCode,
    ).toBe(204)
    expect(
      (await h.app.inject({ method: 'DELETE', url: `/alerts/rules/${id}`, headers: { 'x-api-key': manage } }))
        .statusCode,
    ).toBe(404)
  })

  it('says what a rule of each kind lacks, and what it watches that does not exist (422 with loc)', async () => {
    const cases: Array<[object, string]> = [
      [{ kind: 'stale', minutes: 5 }, 'datalogger'],
      [{ kind: 'stale', meter: 860 }, 'minutes'],
      [{ kind: 'threshold', meter: 860 }, 'above'],
      [{ kind: 'threshold', meter: 860, above: 1, below: 0 }, 'above'],
      [{ kind: 'night-baseline', meter: 860 }, 'percent'],
      [{ kind: 'quarantine', count: 3 }, 'minutes'],
      [{ kind: 'stale', datalogger: 'DL-NOPE', minutes: 5 }, 'datalogger'],
      [{ kind: 'threshold', meter: 999_999, above: 1 }, 'meter'],
    ]
    for (const [body, field] of cases) {
      const answer = await createRule(body)
      expect(answer.statusCode, JSON.stringify(body)).toBe(422)
      expect(answer.json().detail[0].loc).toEqual(['body', field])
    }
    expect((await createRule({ kind: 'flood', meter: 860 })).statusCode).toBe(422)
  })

  it('pnpm energy alert:create, alert:list and alert:delete work on the database', async () => {
    const url = h.database.url
    const made = await energyCli(url, [
      'alert:create',
      '--kind',
      'threshold',
      '--meter',
      '900',
      '--above',
      '250',
      '--for',
      '2',
      '--name',
      'dc_hot',
    ])
    expect(made.code, made.stderr).toBe(0)
    const rule = JSON.parse(made.stdout)
    expect(rule).toMatchObject({ name: 'dc_hot', kind: 'threshold', meter: 900, params: { above: 250, quarters: 2 } })
    const bad = await energyCli(url, ['alert:create', '--kind', 'stale', '--minutes', 'ten', '--meter', '900'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--minutes')
    const listed = await energyCli(url, ['alert:list'])
    expect(JSON.parse(listed.stdout).map((r: { name: string }) => r.name)).toContain('dc_hot')
    const deleted = await energyCli(url, ['alert:delete', '--id', String(rule.id)])
    expect(deleted.code, deleted.stderr).toBe(0)
  }, 60_000)
})

describe('evaluation: pending, firing, resolved (Prometheus `for`)', () => {
  it('a silent datalogger: pending, then firing once `for` has passed; its samples resolve it; history kept', async () => {
    clock = START
    await sample('DL-EC-01', 890, 1.5, 'kWh')
    const rule = await createRule({
      kind: 'stale',
      name: 'ec_silent',
      datalogger: 'DL-EC-01',
      minutes: 5,
      for_seconds: 120,
    })
    expect(rule.statusCode).toBe(201)
    await tick()
    expect(await alertsOf('ec_silent')).toEqual([])
    clock = START + 6 * 60_000
    await tick()
    expect((await alertsOf('ec_silent')).map((a) => a.state)).toEqual(['pending'])
    clock = START + 7 * 60_000
    await tick()
    expect((await alertsOf('ec_silent')).map((a) => a.state)).toEqual(['pending'])
    clock = START + 8 * 60_000
    await tick()
    const [firing] = await alertsOf('ec_silent')
    expect(firing).toMatchObject({
      state: 'firing',
      labels: { alertname: 'ec_silent', datalogger: 'DL-EC-01', severity: 'warning', kind: 'stale' },
    })
    expect(firing?.value).toBe(8 * 60)
    await sample('DL-EC-01', 890, 1.5, 'kWh')
    await tick()
    expect((await alertsOf('ec_silent')).map((a) => a.state)).toEqual(['resolved'])
    const open = await h.app.inject({ url: '/alerts?state=firing', headers: { 'x-api-key': reader } })
    expect(open.json().alerts.filter((a: { rule: string }) => a.rule === 'ec_silent')).toEqual([])
  })

  it('a pending alert whose condition ends before `for` is dropped, never fired', async () => {
    clock = START + 60 * 60_000
    await sample('DL-METEO-01', 930, 12, 'Cel')
    await createRule({ kind: 'stale', name: 'meteo_silent', meter: 930, minutes: 10, for_seconds: 600 })
    clock += 11 * 60_000
    await tick()
    expect((await alertsOf('meteo_silent')).map((a) => a.state)).toEqual(['pending'])
    await sample('DL-METEO-01', 930, 12, 'Cel')
    await tick()
    expect(await alertsOf('meteo_silent')).toEqual([])
  })

  it('threshold: n consecutive complete quarter hours past the level', async () => {
    clock = START + 2 * 86_400_000
    const last = Math.floor(clock / QUARTER_MS) * QUARTER_MS - QUARTER_MS
    await createRule({ kind: 'threshold', name: 'dc_load', meter: 900, above: 100, quarters: 3 })
    const q = (t: number, avg: number) => ({
      time: t,
      meter: 900,
      avg,
      min: avg,
      max: avg,
      sum: avg,
      count: 1,
      tag: 'ok',
    })
    await insertMeterReadings(h.database, [q(last - 2 * QUARTER_MS, 150), q(last - QUARTER_MS, 90), q(last, 160)])
    await tick()
    expect(await alertsOf('dc_load')).toEqual([])
    clock += QUARTER_MS
    await insertMeterReadings(h.database, [q(last + QUARTER_MS, 170)])
    await tick()
    expect(await alertsOf('dc_load')).toEqual([])
    clock += QUARTER_MS
    await insertMeterReadings(h.database, [q(last + 2 * QUARTER_MS, 180)])
    await tick()
    expect(await alertsOf('dc_load')).toMatchObject([{ state: 'firing', labels: { meter: '900' }, value: 180 }])
    // /metrics: the alerts firing and each datalogger's last-sample age
    const metrics = await h.app.inject({ url: '/metrics' })
    expect(metrics.body).toMatch(/energy_alerts_firing\{[^}]*rule="dc_load"[^}]*\} 1/)
    expect(metrics.body).toMatch(/energy_datalogger_last_sample_age_seconds\{datalogger="DL-EC-01"[^}]*\} \d+/)
  })

  it('night-baseline: last night above the median of the trailing nights by the percent', async () => {
    // 28 nights of 1 kWh a quarter hour between 00:00 and 06:00 Rome, then one of 1.6
    const rome = Date.parse('2025-01-10T00:00:00+01:00')
    const readings = []
    for (let night = 0; night < 29; night++) {
      for (let k = 0; k < 24; k++) {
        const v = night === 28 ? 1.6 : 1
        readings.push({
          time: rome + night * 86_400_000 + k * QUARTER_MS,
          meter: 880,
          avg: v,
          min: v,
          max: v,
          sum: v,
          count: 1,
          tag: 'ok',
        })
      }
    }
    await insertMeterReadings(h.database, readings)
    clock = rome + 28 * 86_400_000 + 8 * 3_600_000
    await createRule({ kind: 'night-baseline', name: 'cit_night', meter: 880, percent: 50 })
    await createRule({ kind: 'night-baseline', name: 'cit_night_lax', meter: 880, percent: 80 })
    await tick()
    const [night] = await alertsOf('cit_night')
    expect(night?.state).toBe('firing')
    expect(night?.value).toBeCloseTo(24 * 1.6, 9)
    expect(await alertsOf('cit_night_lax')).toEqual([])
  })

  it('quarantine: more than N quarantined records from one datalogger in M minutes', async () => {
    clock = START + 3 * 86_400_000
    await createRule({ kind: 'quarantine', name: 'aulep_refused', datalogger: 'DL-AULEP-01', count: 2, minutes: 10 })
    for (let i = 0; i < 3; i++) {
      // a wrong unit: refused, kept in the quarantine
      const result = await sample('DL-AULEP-01', 860, 5 + i, 'Cel', clock + i * 1000)
      expect(result.refused.length).toBe(1)
    }
    await tick()
    expect(await alertsOf('aulep_refused')).toMatchObject([
      { state: 'firing', value: 3, labels: { datalogger: 'DL-AULEP-01' } },
    ])
    clock += 11 * 60_000
    await tick()
    expect((await alertsOf('aulep_refused')).map((a) => a.state)).toEqual(['resolved'])
  })

  it('a resolved alert leaves the history ALERT_HISTORY_RETENTION_DAYS (90) after it ended, its notifications with it', async () => {
    const day = 86_400_000
    const insert = async (name: string, state: string, resolvedAgoDays: number | null) => {
      const { rows } = await h.database.pool.query<{ id: string }>(
        `insert into alerts (rule_name, subject, labels, state, summary, active_at, fired_at, resolved_at, updated_at)
         values ($1, 'DL-CF-01', '{}', $2, 'kept?', $3, $3, $4, $3) returning id`,
        [
          name,
          state,
          new Date(clock - 200 * day),
          resolvedAgoDays === null ? null : new Date(clock - resolvedAgoDays * day),
        ],
      )
      await h.database.pool.query(
        `insert into alert_outbox (alert_id, idempotency_key, body, sent_at) values ($1, $2, '{}', $3)`,
        [rows[0]?.id, `test-${name}`, new Date(clock - 100 * day)],
      )
    }
    await insert('ended_long_ago', 'resolved', 91)
    await insert('ended_lately', 'resolved', 89)
    await insert('firing_for_long', 'firing', null)
    // the purge runs at most hourly, at a tick
    clock += 2 * 3_600_000
    await tick()
    const left = await h.database.pool.query<{ rule_name: string }>(
      `select rule_name from alerts where rule_name in ('ended_long_ago', 'ended_lately', 'firing_for_long') order by rule_name`,
    )
    expect(left.rows.map((r) => r.rule_name)).toEqual(['ended_lately', 'firing_for_long'])
    const outbox = await h.database.pool.query<{ key: string }>(
      `select idempotency_key as key from alert_outbox where idempotency_key like 'test-%' order by 1`,
    )
    expect(outbox.rows.map((r) => r.key)).toEqual(['test-ended_lately', 'test-firing_for_long'])
  })
})
