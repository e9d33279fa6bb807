/**
 * The demo details the first start makes (a user and its password, a public application, an API
 * key), kept in `<DATA_DIR>/demo.json` (readable by its owner only) so `pnpm demo` can show
 * them again, and the one "Try it" block that shows them. Each service's details are kept
 * under the database they belong to (the embedded one, or a server's URL without its
 * password): a start on another database neither shows nor overwrites them.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { senmlTopic } from '@campus/ingest/service'
import { type ServiceDescriptor, serviceEndpoints } from '@campus/shared'
import type { StackConfig } from './services.ts'
import { services } from './services.ts'

export interface DemoDetails {
  oauth?: { username: string; password: string; client_id: string; redirect_uri: string }
  /** `gatewayKey`: the demo's key for POST /ingest/senml (absent in the details of older starts). */
  energy?: { key: string; gatewayKey?: string }
}

type ServiceName = keyof DemoDetails

/** demo.json: the details of each database, by `databaseIdentity`. */
interface DemoFile {
  byDatabase: Record<string, DemoDetails>
}

export const demoFile = (config: { DATA_DIR: string }): string => resolve(config.DATA_DIR, 'demo.json')

/** `embedded`, or the URL of the service's database server without its password. */
export function databaseIdentity(descriptor: ServiceDescriptor, config: StackConfig): string {
  const url = serviceEndpoints(descriptor, config).databaseUrl
  if (!url) return 'embedded'
  const identity = new URL(url)
  identity.password = ''
  return identity.toString()
}

function readDemoFile(config: StackConfig): DemoFile {
  const file = demoFile(config)
  const parsed = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<DemoFile>) : {}
  // a file without `byDatabase` says of no database whose details it holds: they are not shown
  return { byDatabase: parsed.byDatabase ?? {} }
}

const serviceNames = services.map((d) => d.name as ServiceName)
const descriptorOf = (name: ServiceName) => services.find((d) => d.name === name)!

/** The details that belong to the databases the configuration names. */
export function readDemoDetails(config: StackConfig): DemoDetails {
  const { byDatabase } = readDemoFile(config)
  const details: DemoDetails = {}
  for (const name of serviceNames) {
    const found = byDatabase[databaseIdentity(descriptorOf(name), config)]?.[name]
    if (found) Object.assign(details, { [name]: found })
  }
  return details
}

/** Records `details` under the databases the configuration names, keeping those of others. */
export function writeDemoDetails(config: StackConfig, details: DemoDetails): void {
  const contents = readDemoFile(config)
  for (const name of serviceNames) {
    const identity = databaseIdentity(descriptorOf(name), config)
    const entry = { ...contents.byDatabase[identity] }
    if (details[name]) Object.assign(entry, { [name]: details[name] })
    else delete entry[name]
    contents.byDatabase[identity] = entry
  }
  const file = demoFile(config)
  writeFileSync(file, `${JSON.stringify(contents, null, 2)}\n`, { mode: 0o600 })
  chmodSync(file, 0o600)
}

/** Where each service answers, as the stack's configuration says. */
export function serviceUrls(config: StackConfig): Record<string, string> {
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST
  return Object.fromEntries(services.map((d) => [d.name, `http://${host}:${serviceEndpoints(d, config).port}`]))
}

/**
 * Plain lines, no prefixes: made to be read and copied. `urls`: where the services answer (by
 * default where the configuration says; `pnpm demo` passes those the running stack announced),
 * with the broker (`mqtt`) and the ingest service when live.
 */
export function tryItBlock(
  config: StackConfig,
  details: DemoDetails,
  urls: Record<string, string> = serviceUrls(config),
): string {
  const { oauth, energy, ingest, mqtt } = urls
  const rows: Array<[string, string]> = [
    [
      'Sign in',
      `${oauth}/users/sign_in   as ${details.oauth ? `${details.oauth.username} / ${details.oauth.password}` : 'a user made with pnpm oauth user:create'}`,
    ],
    ['Applications', `${oauth}/profile/applications`],
    ['Dashboard', `${energy}/dashboard`],
    ['OAuth API docs', `${oauth}/docs`],
    ['Data API docs', `${energy}/docs`],
  ]
  if (details.oauth) {
    // the example web application serves that redirect URI: the client works as it is
    const port = new URL(details.oauth.redirect_uri).port
    rows.push([
      'Demo client',
      `${details.oauth.client_id} (public, PKCE; ${details.oauth.redirect_uri}): CLIENT_ID=${details.oauth.client_id} PORT=${port} npm run example:web-client`,
    ])
  }
  if (details.energy) {
    rows.push(['API key', `${details.energy.key} (reads every endpoint of the data API)`])
    rows.push(['Try', `curl -H 'x-api-key: ${details.energy.key}' '${energy}/data/pv?aggregation=1%20h'`])
  }
  if (mqtt && ingest) {
    const feeding = config.SIMULATE_DATALOGGERS === false ? '' : ' (simulated dataloggers)'
    const gateway = details.energy?.gatewayKey
    rows.push([
      'Live',
      `${mqtt} on ${senmlTopic('<datalogger>', config.MQTT_TOPIC_ROOT)}${feeding}; POST ${ingest}/ingest/senml${gateway ? ' with the gateway key' : ''}`,
    ])
    if (gateway) rows.push(['Gateway key', `${gateway} (writes: POST /ingest/senml only)`])
  }
  const width = Math.max(...rows.map(([label]) => label.length)) + 2
  return [
    'Try it:',
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}${value}`),
    `Shown again by: npm run demo (or pnpm demo). Kept in ${demoFile(config)}.`,
  ].join('\n')
}
