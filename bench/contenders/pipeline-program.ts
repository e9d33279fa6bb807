/**
 * The minimal pipeline a competent user writes to take SenML packs (RFC 8428) from MQTT into
 * PostgreSQL, exactly once per sample, losing nothing: MQTT.js -> COPY into a temporary staging
 * table -> INSERT ... ON CONFLICT DO NOTHING into the table keyed by (meter_id, at), each message
 * acknowledged only after the transaction holding it has committed (MQTT.js `handleMessage`:
 * its acknowledgement waits for the callback, and a connection takes its next message only then,
 * so several connections share the subscription and one writer batches what they hold).
 *
 *   PIPELINE_MQTT_URL PIPELINE_DATABASE_URL PIPELINE_TOPIC ($share/<group>/<root>/+/senml)
 *   PIPELINE_CLIENT_ID PIPELINE_CONNECTIONS (8) node bench/contenders/pipeline-program.ts
 *
 * What it leaves out, as such a user would: units, quarantine of bad records (dropped, counted in
 * the log), anything beyond the samples themselves.
 */
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import mqtt, { type MqttClient } from 'mqtt'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'

function setting(name: string, fallback?: string): string {
  const value = process.env[name] ?? fallback
  if (value === undefined) throw new Error(`${name} is not set`)
  return value
}

const MQTT_URL = setting('PIPELINE_MQTT_URL')
const DATABASE_URL = setting('PIPELINE_DATABASE_URL')
const TOPIC = setting('PIPELINE_TOPIC')
const CLIENT_ID = setting('PIPELINE_CLIENT_ID')
const CONNECTIONS = Number(setting('PIPELINE_CONNECTIONS', '8'))
/** Most messages written in one transaction. */
const BATCH = 500
const METER = /^urn:campus:meter:(\d+)$/
/** RFC 8428 4.5.3: a resolved time below 2^28 is relative to now. */
const RELATIVE = 2 ** 28

/** The records of a SenML pack as COPY text lines (meter, instant, value); bad records are skipped. */
function copyLines(payload: Buffer, nowSeconds: number): { lines: string; skipped: number } {
  let pack: unknown
  try {
    pack = JSON.parse(payload.toString('utf8'))
  } catch {
    return { lines: '', skipped: 1 }
  }
  if (!Array.isArray(pack)) return { lines: '', skipped: 1 }
  let baseName = ''
  let baseTime = 0
  let lines = ''
  let skipped = 0
  for (const record of pack as Array<Record<string, unknown>>) {
    if (typeof record.bn === 'string') baseName = record.bn
    if (typeof record.bt === 'number') baseTime = record.bt
    const name = baseName + (typeof record.n === 'string' ? record.n : '')
    const meter = METER.exec(name)?.[1]
    let seconds = baseTime + (typeof record.t === 'number' ? record.t : 0)
    if (seconds < RELATIVE) seconds += nowSeconds
    if (meter === undefined || typeof record.v !== 'number' || !Number.isFinite(record.v)) {
      skipped++
      continue
    }
    lines += `${meter}\t${new Date(Math.round(seconds * 1000)).toISOString()}\t${record.v}\n`
  }
  return { lines, skipped }
}

interface Held {
  lines: string
  acknowledge: () => void
}

const database = new pg.Client({ connectionString: DATABASE_URL, application_name: 'minimal-pipeline' })
const held: Held[] = []
let writing: Promise<void> | undefined
let stopping = false

/** Writes what is held, batch after batch, each in one transaction, then acknowledges its messages. */
async function writeHeld(): Promise<void> {
  while (held.length > 0) {
    const batch = held.splice(0, BATCH)
    for (;;) {
      try {
        await database.query('begin')
        const copy = database.query(copyFrom('copy staging (meter_id, at, value) from stdin'))
        await pipeline(Readable.from(batch.map((m) => m.lines).filter(Boolean)), copy)
        await database.query(
          `insert into samples (meter_id, at, reading, value)
           select meter_id, at, 'value', value from staging on conflict do nothing`,
        )
        await database.query('commit')
        break
      } catch (error) {
        // nothing acknowledged: the same batch again in a second (the broker keeps the messages meanwhile)
        await database.query('rollback').catch(() => {})
        process.stderr.write(`write failed, retrying: ${(error as Error).message}\n`)
        await new Promise((r) => setTimeout(r, 1000))
      }
    }
    for (const message of batch) message.acknowledge()
  }
}

function hold(message: Held): void {
  held.push(message)
  // one writer: what arrives while it writes is its next batch
  writing ??= writeHeld().finally(() => {
    writing = undefined
  })
}

async function connect(clientId: string): Promise<MqttClient> {
  const client = await mqtt.connectAsync(MQTT_URL, {
    protocolVersion: 5,
    clientId,
    // a persistent session: what arrives while the pipeline restarts waits at the broker
    clean: false,
    properties: { sessionExpiryInterval: 60 },
  })
  client.handleMessage = (packet, callback) => {
    if (packet.cmd !== 'publish' || stopping) return
    const { lines, skipped } = copyLines(packet.payload as Buffer, Date.now() / 1000)
    if (skipped > 0) process.stderr.write(`${skipped} records skipped on ${packet.topic}\n`)
    hold({ lines, acknowledge: () => callback() })
  }
  await client.subscribeAsync(TOPIC, { qos: 1 })
  return client
}

await database.connect()
// per connection, emptied by each commit
await database.query(
  'create temporary table staging (meter_id integer, at timestamptz, value double precision) on commit delete rows',
)
const clients = await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => connect(`${CLIENT_ID}-${i + 1}`)))
process.stdout.write(`taking ${TOPIC} on ${CONNECTIONS} connections\n`)

async function stop(): Promise<void> {
  // what is held and not yet written stays unacknowledged: the broker delivers it again
  stopping = true
  await writing
  await Promise.all(clients.map((c) => c.endAsync()))
  await database.end()
  process.exit(0)
}
process.once('SIGTERM', () => void stop())
process.once('SIGINT', () => void stop())
