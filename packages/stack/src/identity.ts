/**
 * One identity across the stack: the data API accepts the OAuth server's access tokens, checking
 * them by introspection as a resource server registered there, and signs people in through a
 * public, trusted first-party application (the dashboard, Swagger UI, and `pnpm energy login` by
 * the device flow). On every start the stack
 * makes sure of both registrations (idempotent) and hands the data API the issuer, the browser
 * client id and its own secret; the
 * secret is made once and kept in `DATA_DIR/energy-oauth-client.secret` (0600).
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { energyService, FIRST_PARTY_CLIENT_ID } from '@campus/energy-data/service'
import { oauthService } from '@campus/oauth-server/service'
import { serviceEndpoints, spawnService } from '@campus/shared'
import type { StackConfig } from './services.ts'

/** The data API's client id at the OAuth server. */
export const ENERGY_CLIENT_ID = 'energy-data'

/** The client id of the data API's people-facing side (dashboard, Swagger UI, `pnpm energy login`). */
export const ENERGY_BROWSER_CLIENT_ID = FIRST_PARTY_CLIENT_ID

/** Where the OAuth server sends the browser back: the dashboard, and Swagger UI's redirect page. */
export const browserRedirectUris = (energyUrl: string): string[] => [
  `${energyUrl}/dashboard`,
  `${energyUrl}/docs/static/oauth2-redirect.html`,
]

/** The secret of the data API's client, made on first start. */
function clientSecretFile(config: StackConfig): { file: string; secret: string } {
  const file = resolve(config.DATA_DIR, 'energy-oauth-client.secret')
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600 })
  return { file, secret: readFileSync(file, 'utf8').trim() }
}

/**
 * Registers the data API at the OAuth server (through its command line, on the OAuth database at
 * `oauthDatabaseUrl`) and returns the variables the data API needs to accept its tokens.
 */
export async function wireIdentity(
  config: StackConfig,
  oauthDatabaseUrl: string | undefined,
  onLine: (line: string, stream: 'stdout' | 'stderr') => void,
  /** The data API instances people open (default: the one of `config`'s port). */
  energyUrls: readonly string[] = [`http://${config.HOST}:${serviceEndpoints(energyService, config).port}`],
): Promise<Record<string, string>> {
  const { file, secret } = clientSecretFile(config)
  const register = async (args: string[]) => {
    const command = spawnService(oauthService, {
      entry: 'cli',
      args,
      env: { [oauthService.databaseUrlEnv]: oauthDatabaseUrl, MIGRATE_ON_START: 'false' },
      maxOutput: 64 * 1024,
    })
    const code = await command.exited
    if (code !== 0) {
      for (const line of command.output().split('\n').filter(Boolean)) onLine(line, 'stderr')
      throw new Error(`${args[0]} at the OAuth server failed (exit ${code})`)
    }
  }
  await register([
    'resource-server:register',
    '--client-id',
    ENERGY_CLIENT_ID,
    '--name',
    'Energy data API',
    '--secret-file',
    file,
  ])
  await register([
    'browser-app:register',
    '--client-id',
    ENERGY_BROWSER_CLIENT_ID,
    '--name',
    'Energy dashboard',
    '--scopes',
    'read_energy',
    ...energyUrls.flatMap(browserRedirectUris).flatMap((uri) => ['--redirect-uri', uri]),
    '--device-code',
  ])
  const issuer = process.env.OAUTH_ISSUER ?? `http://${config.HOST}:${serviceEndpoints(oauthService, config).port}`
  return {
    ENERGY_OAUTH_ISSUER: process.env.ENERGY_OAUTH_ISSUER ?? issuer,
    ENERGY_OAUTH_CLIENT_ID: ENERGY_CLIENT_ID,
    ENERGY_OAUTH_CLIENT_SECRET: secret,
    ENERGY_OAUTH_BROWSER_CLIENT_ID: ENERGY_BROWSER_CLIENT_ID,
  }
}

/** The service whose launch takes the variables of `wireIdentity`. */
export const identityConsumer = energyService.name
