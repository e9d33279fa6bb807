/**
 * Delivery of alerts to a real Prometheus Alertmanager (Debian's prometheus-alertmanager, started
 * here on a private port with its own storage) and to a real webhook receiver: a datalogger goes
 * silent, the alert fires within its `for`; the service restarts while the webhook is down;
 * samples resume, the alert resolves; nothing is lost, and a receiver honouring the idempotency
 * key takes each notification once.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@campus/shared'
import { stopServerProgram, type TestDatabase } from '@campus/shared/testing'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SIGNATURE_HEADER } from '../../src/alerts/delivery.ts'
import { buildApp } from '../../src/app.ts'
import { defaultSettings } from '../../src/config.ts'
import type { EnergyDatabase } from '../../src/db/schema.ts'
import type { EnergyApp } from '../../src/energy-app.ts'
import { takeMessages } from '../../src/repositories/sample-writes.ts'
import { inTransaction } from '../../src/repositories/transaction.ts'
import { apiKey, seeded, sleep, testDatabase } from '../harness.ts'

const ALERTMANAGER = ['/usr/bin/prometheus-alertmanager', '/usr/bin/alertmanager'].find(existsSync)
if (!ALERTMANAGER && !process.env.CI)
  console.warn(
    'alertmanager tests skipped: prometheus-alertmanager not found (apt-get install prometheus-alertmanager)',
  )

const SECRET = 'a-shared-secret-of-the-webhook'

interface Received {
  key: string
  body: {
    version: string
    status: string
    alerts: Array<{ status: string; labels: Record<string, string>; endsAt: string }>
  }
}

/** A webhook receiver that checks the signature and honours the idempotency key; it can be made to fail. */
function webhookReceiver() {
  const taken = new Map<string, Received>()
  const deliveries: string[] = []
  let failing = false
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (c: Buffer) => chunks.push(c))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const key = String(request.headers['idempotency-key'])
      deliveries.push(key)
      const expected = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`
      if (request.headers[SIGNATURE_HEADER] !== expected) {
        response.writeHead(401).end()
        return
      }
      if (failing) {
        response.writeHead(503).end()
        return
      }
      if (!taken.has(key)) taken.set(key, { key, body: JSON.parse(body) })
      response.writeHead(200).end()
    })
  })
  return {
    server,
    taken,
    deliveries,
    fail(on: boolean) {
      failing = on
    },
    async listen() {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
    },
  }
}

async function startAlertmanager(binary: string, dir: string): Promise<{ url: string; process: ChildProcess }> {
  mkdirSync(join(dir, 'data'), { recursive: true })
  writeFileSync(join(dir, 'alertmanager.yml'), 'route:\n  receiver: blackhole\nreceivers:\n  - name: blackhole\n')
  const port = await freePort()
  const child = spawn(
    binary,
    [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    { stdio: 'ignore' },
  )
  const url = `http://127.0.0.1:${port}`
  // a loaded machine may take a while to start it
  for (let i = 0; i < 300; i++) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    )
    if (ready) return { url, process: child }
    await sleep(100)
  }
  child.kill()
  throw new Error('alertmanager did not become ready within 30 s')
}

describe.runIf(ALERTMANAGER || process.env.CI)('alert delivery: Alertmanager and a webhook, across a restart', () => {
  const dir = join(tmpdir(), `alerts-am-${process.pid}`)
  const receiver = webhookReceiver()
  let alertmanager: { url: string; process: ChildProcess }
  let database: TestDatabase<EnergyDatabase>
  let app: FastifyInstance | undefined
  let clock = 0
  let settings: ReturnType<typeof defaultSettings>

  const start = async () => {
    app = await buildApp({ database, settings, now: () => clock })
    await app.ready()
    return app
  }
  const tick = () => (app as unknown as EnergyApp).alerts.tick()
  const amAlerts = async () => {
    const answer = await fetch(
      `${alertmanager.url}/api/v2/alerts?filter=${encodeURIComponent('alertname="ec_silent"')}`,
    )
    return (await answer.json()) as Array<{ labels: Record<string, string>; status: { state: string }; endsAt: string }>
  }
  const sample = (at: number) => {
    const pack = JSON.stringify([{ n: 'urn:campus:meter:890', t: at / 1000 - 1, v: 2, u: 'kWh' }])
    return inTransaction(database.pool, (client) =>
      takeMessages(client, [
        { source: 'mqtt:campus/DL-EC-01/senml', datalogger: 'DL-EC-01', payload: Buffer.from(pack), receivedMs: at },
      ]),
    )
  }

  beforeAll(async () => {
    alertmanager = await startAlertmanager(ALERTMANAGER ?? 'prometheus-alertmanager', dir)
    const hook = await receiver.listen()
    database = await testDatabase(seeded({ from: '2025-01-01', to: '2025-01-02', seed: '4' }))
    const defaults = defaultSettings()
    settings = {
      ...defaults,
      alerts: {
        ...defaults.alerts,
        // only the ticks the test asks for
        evaluationMs: 3_600_000,
        alertmanagerUrl: alertmanager.url,
        resendMs: 60_000,
        webhook: { url: hook, secret: SECRET },
        externalUrl: 'http://127.0.0.1:8000',
      },
    }
  }, 60_000)

  afterAll(async () => {
    await app?.close()
    await database?.close()
    receiver.server.close()
    if (alertmanager) await stopServerProgram(alertmanager.process)
    rmSync(dir, { recursive: true, force: true })
  })

  it('fires within its `for`, survives a restart with the webhook down, resolves when samples resume', async () => {
    const t0 = Date.now() - 5 * 60_000
    clock = t0
    await sample(t0)
    await start()
    const key = await apiKey(database.db, ['/alerts/*'])
    const created = await (app as FastifyInstance).inject({
      method: 'POST',
      url: '/alerts/rules',
      headers: { 'x-api-key': key },
      payload: {
        kind: 'stale',
        name: 'ec_silent',
        datalogger: 'DL-EC-01',
        minutes: 1,
        for_seconds: 60,
        severity: 'critical',
      },
    })
    expect(created.statusCode).toBe(201)

    // silent for two minutes: pending, nothing sent
    clock = t0 + 2 * 60_000
    await tick()
    expect(receiver.deliveries).toEqual([])
    expect(await amAlerts()).toEqual([])
    // its `for` (60 s) later: firing, at Alertmanager and the webhook
    clock = t0 + 3 * 60_000
    await tick()
    const [fired] = await amAlerts()
    expect(fired?.labels).toMatchObject({ alertname: 'ec_silent', datalogger: 'DL-EC-01', severity: 'critical' })
    expect(fired?.status.state).toBe('active')
    expect([...receiver.taken.keys()]).toHaveLength(1)
    const firing = [...receiver.taken.values()][0] as Received
    expect(firing.body).toMatchObject({ version: '4', status: 'firing' })
    expect(firing.body.alerts[0]).toMatchObject({
      status: 'firing',
      labels: { alertname: 'ec_silent', datalogger: 'DL-EC-01' },
      endsAt: '0001-01-01T00:00:00Z',
    })

    // the webhook goes down; samples resume; the resolution is committed, its notification waits
    receiver.fail(true)
    clock = t0 + 4 * 60_000
    await sample(clock)
    await tick()
    expect(receiver.taken.size).toBe(1)
    // a restart: a new process on the same database
    await (app as FastifyInstance).close()
    app = undefined
    receiver.fail(false)
    // the outbox's backoff (2 s after the first failure) has passed by the next tick
    await sleep(2500)
    const restarted = await start()
    await tick()
    expect(receiver.taken.size).toBe(2)
    const resolved = [...receiver.taken.values()][1] as Received
    expect(resolved.body).toMatchObject({ status: 'resolved', alerts: [{ status: 'resolved' }] })
    expect(resolved.body.alerts[0]?.endsAt).toBe(new Date(t0 + 4 * 60_000).toISOString())
    // each notification was taken once, whatever the retries
    expect(new Set(receiver.deliveries).size).toBe(2)
    // Alertmanager was told the end: the alert is no longer active there
    expect(await amAlerts()).toEqual([])
    const history = await restarted.inject({
      url: '/alerts?rule=ec_silent',
      headers: { 'x-api-key': await apiKey(database.db) },
    })
    expect(history.json().alerts.map((a: { state: string }) => a.state)).toEqual(['resolved'])
  }, 60_000)
})
