/**
 * A bearer token of the OAuth server against an API key at the data API, in one run, on PostgreSQL.
 *
 *   node --experimental-strip-types bench/bearer.ts [postgres://admin-url]
 *
 * Both services as their own processes on databases of their own (made and dropped here), the
 * data API introspecting tokens as the resource server the stack registers. 50 connections ask
 * /data/pv for one day for 10 s with `x-api-key` and 10 s with `Authorization: Bearer` in each of
 * three rounds, in alternating turns; the figure is the ratio of the medians (goal >= 0.9: after the first
 * request the token's check is a cache hit, where the key costs a lookup).
 */
import { randomBytes } from 'node:crypto'
import type { EnergyDatabase } from '../packages/energy-data/src/db/schema.ts'
import { createApiKey } from '../packages/energy-data/src/repositories/api-keys.ts'
import { seedEstate } from '../packages/energy-data/src/seed/seed.ts'
import { energyService } from '../packages/energy-data/src/service.ts'
import { createApplication, createUser } from '../packages/oauth-server/src/accounts.ts'
import { changeMechanism } from '../packages/oauth-server/src/changes/commit.ts'
import type { OAuthDB } from '../packages/oauth-server/src/db/schema.ts'
import { digest } from '../packages/oauth-server/src/domain/secrets.ts'
import { upsertResourceServer } from '../packages/oauth-server/src/repositories/applications.ts'
import { oauthService } from '../packages/oauth-server/src/service.ts'
import { launchService, type RunningService } from '../packages/shared/src/index.ts'
import { energyNodeFlags, startEnergyService } from './energy-support.ts'
import { alternating, type CannonResult, cannon, throughput } from './load.ts'
import { BENCH_SERVER_URL, benchDatabase, goalLine, median } from './support.ts'

const ADMIN_URL = process.argv[2] ?? BENCH_SERVER_URL
const line = (text: string) => process.stdout.write(`${text}\n`)

async function main() {
  const oauthDb = await benchDatabase<OAuthDB>('bearerbench', oauthService.migrationsDir, ADMIN_URL)
  const energyDb = await benchDatabase<EnergyDatabase>('bearerbench', energyService.migrationsDir, ADMIN_URL)
  let oauth: RunningService | undefined
  let energy: Awaited<ReturnType<typeof startEnergyService>> | undefined
  try {
    await seedEstate(energyDb.pool, {
      fromMs: Date.parse('2025-05-30T00:00:00Z'),
      toMs: Date.parse('2025-06-03T00:00:00Z'),
      seed: 1,
    })
    const { key } = await createApiKey(energyDb.db, { name: 'bench', endpoints: ['*'] })
    const secret = randomBytes(32).toString('base64url')
    await changeMechanism(oauthDb.db, { cacheSeconds: 0, notify: false }).commit((trx) =>
      upsertResourceServer(trx, { uid: 'energy-data', name: 'Energy data API', secretDigest: digest(secret) }),
    )
    const password = randomBytes(12).toString('base64url')
    await createUser(oauthDb.db, { username: 'bench', password })
    const { application } = await createApplication(oauthDb.db, {
      name: 'bench',
      redirectUris: ['https://bench.example/cb'],
      scopes: ['read_energy'],
      confidential: false,
    })
    oauth = await launchService(oauthService, {
      env: { OAUTH_DATABASE_URL: oauthDb.url, LOG_LEVEL: 'warn', MIGRATE_ON_START: 'false' },
      maxOutput: 0,
    })
    energy = await startEnergyService(energyDb.url, energyNodeFlags(process.env.BENCH_NODE_FLAGS), {
      ENERGY_OAUTH_ISSUER: oauth.url,
      ENERGY_OAUTH_CLIENT_SECRET: secret,
    })
    const issued = await fetch(`${oauth.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'bench',
        password,
        client_id: application.uid,
        scope: 'read_energy',
      }),
    })
    const { access_token: token } = (await issued.json()) as { access_token: string }

    const dayUrl = `${energy.base}/data/pv?start_datetime=2025-06-01&end_datetime=2025-06-01T23:45:00Z`
    const load = (headers: Record<string, string>, duration: number) =>
      cannon(dayUrl, { connections: 50, duration, headers })
    const runs = { key: [] as number[], bearer: [] as number[] }
    line('/data/pv one day, 50 connections, 10 s each per round, in alternating turns')
    for (let round = 1; round <= 3; round++) {
      const credentials = [
        ['key', { 'x-api-key': key }],
        ['bearer', { authorization: `Bearer ${token}` }],
      ] as const
      const results = await alternating(credentials, 10, ([, headers], duration) => load(headers, duration))
      for (const [i, [name]] of credentials.entries()) {
        const result = results[i] as CannonResult
        if (result.non2xx || result.errors)
          throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
        runs[name].push(throughput(result))
        line(
          `   ${name.padEnd(6)} round ${round}: ${throughput(result).toFixed(0)} req/s  p99 ${result.latency.p99} ms`,
        )
      }
    }
    const ratio = median(runs.bearer) / median(runs.key)
    line(`   ratio bearer/x-api-key = ${ratio.toFixed(2)} (goal >= 0.9)`)
    line(
      goalLine(
        'bearer / x-api-key, one day of /data/pv',
        runs.bearer.map((b, i) => b / (runs.key[i] as number)),
        { atLeast: 0.9 },
      ),
    )
  } finally {
    const child = energy?.child
    if (child && child.exitCode === null) {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('exit', resolve))
    }
    await oauth?.stop()
    await energyDb.close()
    await oauthDb.close()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
