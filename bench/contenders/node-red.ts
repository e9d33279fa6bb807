/**
 * The Node-RED flow a user would build: mqtt in (QoS 1, an MQTT 5 shared subscription) -> json ->
 * a function node that resolves the SenML records (RFC 8428: name bn + n, time bt + t) and inserts
 * them with `pg`, the function's external module, `INSERT ... ON CONFLICT DO NOTHING` into a table
 * keyed like `meter_samples` (no PostgreSQL node package is to be had here, hence the function).
 * Node-RED runs headless as its own process (no editor, no HTTP), installed on demand into
 * `.data/bench/node-red` (it stays out of the workspace's packages).
 *
 * Its mqtt in node connects with MQTT.js and leaves `handleMessage` as it is: each message is
 * acknowledged on arrival, before the function's insert. What it commits is what is counted.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { senmlTopics } from '../../packages/ingest/src/service.ts'
import { type Contender, mqttPeer, scratchDatabase, spawnContender } from './contender.ts'

const CACHE = fileURLToPath(new URL('../../.data/bench/node-red', import.meta.url))
/** Node-RED's user directory: the external modules of function nodes are installed there. */
const USER_DIR = join(CACHE, 'user')
const RED = join(CACHE, 'node_modules/node-red/red.js')

/** Installs Node-RED 5 and `pg` into the cache the first time; returns Node-RED's version. */
function ensureNodeRed(say: (text: string) => void): string {
  const installs: Array<[string, string]> = [
    [CACHE, 'node-red@5'],
    [USER_DIR, 'pg@8'],
  ]
  const missing = installs.filter(
    ([prefix, spec]) => !existsSync(join(prefix, 'node_modules', spec.split('@')[0]!, 'package.json')),
  )
  if (missing.length > 0) {
    say(`installing ${missing.map(([, spec]) => spec).join(' and ')} into .data/bench/node-red (once, about a minute)`)
    for (const [prefix, spec] of missing) {
      const npm = spawnSync(
        'npm',
        ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', spec],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      if (npm.status !== 0) throw new Error(`npm install ${spec} failed (${npm.error?.message ?? npm.stderr})`)
    }
  }
  return JSON.parse(readFileSync(join(CACHE, 'node_modules/node-red/package.json'), 'utf8')).version as string
}

/** The function node's code, as a user writes it in the editor (plain JavaScript, run by Node-RED). */
const SENML_TO_SAMPLES = `
// SenML (RFC 8428): a record's name is bn + n, its time bt + t in seconds (below 2^28: relative to now)
const pool = context.get('pool')
let bn = ''
let bt = 0
const params = []
const rows = []
for (const r of msg.payload) {
    if (r.bn !== undefined) bn = r.bn
    if (r.bt !== undefined) bt = r.bt
    const m = /^urn:campus:meter:(\\d+)$/.exec(bn + (r.n || ''))
    if (!m || typeof r.v !== 'number') continue
    let t = bt + (r.t || 0)
    if (t < 268435456) t += Date.now() / 1000
    params.push(Number(m[1]), new Date(Math.round(t * 1000)), r.v)
    const i = params.length
    rows.push('($' + (i - 2) + ', $' + (i - 1) + ", 'value', $" + i + ')')
}
if (rows.length > 0) {
    await pool.query('insert into samples (meter_id, at, reading, value) values ' + rows.join(', ') +
        ' on conflict do nothing', params)
}
return null
`

function flows(mqttUrl: string, topic: string, databaseUrl: string): object[] {
  const broker = new URL(mqttUrl)
  return [
    { id: 'senml-tab', type: 'tab', label: 'SenML to PostgreSQL' },
    {
      id: 'mosquitto',
      type: 'mqtt-broker',
      name: 'Mosquitto',
      broker: broker.hostname,
      port: broker.port || '1883',
      clientid: '',
      autoConnect: true,
      usetls: false,
      protocolVersion: '5',
      keepalive: '60',
      cleansession: true,
    },
    {
      id: 'dataloggers',
      type: 'mqtt in',
      z: 'senml-tab',
      name: 'dataloggers',
      // a node placed on the tab (a node without a place is taken for a config node)
      x: 120,
      y: 80,
      topic,
      qos: '1',
      datatype: 'utf8',
      broker: 'mosquitto',
      nl: false,
      rap: true,
      rh: 0,
      inputs: 0,
      wires: [['parse']],
    },
    {
      id: 'parse',
      type: 'json',
      z: 'senml-tab',
      x: 290,
      y: 80,
      property: 'payload',
      action: 'obj',
      pretty: false,
      wires: [['insert']],
    },
    {
      id: 'insert',
      type: 'function',
      z: 'senml-tab',
      name: 'SenML to samples',
      x: 460,
      y: 80,
      func: SENML_TO_SAMPLES,
      outputs: 0,
      timeout: 0,
      noerr: 0,
      initialize: `context.set('pool', new pg.Pool({ connectionString: ${JSON.stringify(databaseUrl)} }))`,
      finalize: `context.get('pool').end()`,
      libs: [{ var: 'pg', module: 'pg' }],
      wires: [],
    },
  ]
}

export async function startNodeRed(mqttUrl: string, run: string, say: (text: string) => void): Promise<Contender> {
  say(`Node-RED ${ensureNodeRed(say)}, headless, mqtt in -> json -> function (pg)`)
  const database = await scratchDatabase('nodered')
  const topicRoot = `bench-${run}-nodered`
  const dir = mkdtempSync(join(tmpdir(), 'bench-node-red-'))
  const flowFile = join(dir, 'flows.json')
  writeFileSync(
    flowFile,
    JSON.stringify(flows(mqttUrl, `$share/b${run}nodered/${senmlTopics(topicRoot)}`, database.url), null, 2),
  )
  const settings = {
    uiHost: '127.0.0.1',
    // headless: no editor, no HTTP endpoints, nothing listening
    httpAdminRoot: false,
    httpNodeRoot: false,
    flowFile,
    credentialSecret: false,
    functionExternalModules: true,
    externalModules: { modules: { allowInstall: false } },
    telemetry: { enabled: false },
    diagnostics: { enabled: false },
    logging: { console: { level: 'warn', metrics: false, audit: false } },
  }
  writeFileSync(join(dir, 'settings.js'), `module.exports = ${JSON.stringify(settings, null, 2)}\n`)
  const red = spawnContender(
    'node-red',
    [RED, '--userDir', USER_DIR, '--settings', join(dir, 'settings.js'), flowFile],
    {},
    /\[error\]|Error/,
  )
  return mqttPeer('Node-RED', database, red, topicRoot, () => rmSync(dir, { recursive: true, force: true }))
}
