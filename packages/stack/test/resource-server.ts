/** The data API registered at the OAuth server as a resource server, as `pnpm start` and docker compose do it. */
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnService } from '@campus/shared'
import { expect } from 'vitest'
import { oauthService } from '../../oauth-server/src/service.ts'

/** Runs `pnpm oauth resource-server:register` (with `extra` flags) on the database at `url`. */
export const registerResourceServer = (url: string, extra: string[]) =>
  spawnService(oauthService, {
    entry: 'cli',
    args: ['resource-server:register', '--client-id', 'energy-data', '--name', 'Energy data API', ...extra],
    env: { OAUTH_DATABASE_URL: url, LOG_LEVEL: 'silent' },
  })

/** Registers the data API with a new secret (kept 0600 in `dir`) and answers the secret. */
export async function registerDataApi(url: string, dir: string): Promise<string> {
  const secret = randomBytes(32).toString('base64url')
  const secretFile = join(dir, 'energy-client-secret')
  writeFileSync(secretFile, secret, { mode: 0o600 })
  const registered = registerResourceServer(url, ['--secret-file', secretFile])
  expect(await registered.exited).toBe(0)
  expect(JSON.parse(registered.output())).toMatchObject({ client_id: 'energy-data', resource_server: true })
  return secret
}
