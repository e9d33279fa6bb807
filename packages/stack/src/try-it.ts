/**
 * The demo details the first start makes (a user and its password, a public application, an API
 * key), kept in `<DATA_DIR>/demo.json` (readable by its owner only) so `pnpm demo` can show
 * them again, and the one "Try it" block that shows them.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { serviceEndpoints } from '@campus/shared'
import type { StackConfig } from './services.ts'
import { services } from './services.ts'

export interface DemoDetails {
  oauth?: { username: string; password: string; client_id: string; redirect_uri: string }
  energy?: { key: string }
}

export const demoFile = (config: { DATA_DIR: string }): string => resolve(config.DATA_DIR, 'demo.json')

export function readDemoDetails(config: { DATA_DIR: string }): DemoDetails {
  const file = demoFile(config)
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DemoDetails) : {}
}

export function writeDemoDetails(config: { DATA_DIR: string }, details: DemoDetails): void {
  const file = demoFile(config)
  writeFileSync(file, `${JSON.stringify(details, null, 2)}\n`, { mode: 0o600 })
  chmodSync(file, 0o600)
}

/** Where each service answers, as the stack's configuration says. */
export function serviceUrls(config: StackConfig): Record<string, string> {
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST
  return Object.fromEntries(services.map((d) => [d.name, `http://${host}:${serviceEndpoints(d, config).port}`]))
}

/** Plain lines, no prefixes: made to be read and copied. */
export function tryItBlock(config: StackConfig, details: DemoDetails): string {
  const { oauth, energy } = serviceUrls(config)
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
  if (details.oauth)
    rows.push(['Demo client', `${details.oauth.client_id} (public, PKCE; ${details.oauth.redirect_uri})`])
  if (details.energy) {
    rows.push(['API key', `${details.energy.key} (every endpoint)`])
    rows.push(['Try', `curl -H 'x-api-key: ${details.energy.key}' '${energy}/data/pv?aggregation=1%20h'`])
  }
  const width = Math.max(...rows.map(([label]) => label.length)) + 2
  return [
    'Try it:',
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}${value}`),
    `Shown again by: npm run demo (or pnpm demo). Kept in ${demoFile(config)}.`,
  ].join('\n')
}
