import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { needsService, type TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EnergyDatabase } from '../../src/db/schema.ts'
import { displayPrefix } from '../../src/domain/api-keys.ts'
import { createApiKey, revokeApiKeys } from '../../src/repositories/api-keys.ts'
import { type ServerProcess, seeded, startEnergyProcess, testDatabase } from '../harness.ts'

const run = promisify(execFile)

/** The secret part of a key: everything past the few characters shown in key listings. */
const secretPart = (key: string) => key.slice(displayPrefix(key).length)

// pg_dump reads a PostgreSQL server of its own version, not the embedded PGlite
const onServer = await needsService('dump test (pg_dump of a PostgreSQL server)', 'TEST_DATABASE_URL')

describe.runIf(onServer)('no API key in the database dump or the logs', () => {
  let database: TestDatabase<EnergyDatabase>
  let server: ServerProcess

  beforeAll(async () => {
    database = await testDatabase(seeded({ from: '2025-05-01', to: '2025-05-04', seed: '2' }))
    server = await startEnergyProcess({
      ENERGY_DATABASE_URL: database.url,
      LOG_LEVEL: 'debug',
      ENERGY_RATE_LIMIT_KEY: '100000',
      ENERGY_RATE_LIMIT_PUBLIC: '100000',
      ENERGY_RATE_LIMIT_FAILED_AUTH: '100000',
    })
  })
  afterAll(async () => {
    await server?.stop()
    await database?.close()
  })

  it('keeps only digests after every keyed endpoint was called with several keys', async () => {
    const keys = [
      (await createApiKey(database.db, { name: 'all', endpoints: ['*'] })).key,
      (await createApiKey(database.db, { name: 'data', endpoints: ['/data/*'] })).key,
      (await createApiKey(database.db, { name: 'meta', endpoints: ['/metadata/meters/*'] })).key,
      (await createApiKey(database.db, { name: 'soon', endpoints: ['*'], expiresAt: new Date(Date.now() + 3_600_000) }))
        .key,
    ]
    const revoked = await createApiKey(database.db, { name: 'gone', endpoints: ['*'] })
    await revokeApiKeys(database.db, { id: revoked.record.id })
    keys.push(revoked.key)

    const catalog = (await (
      await fetch(`${server.url}/auth/apikey/endpoints`, { headers: { 'x-api-key': keys[0] as string } })
    ).json()) as string[]
    const paths = catalog.map((p) =>
      p.replace('{uuid}', p.includes('dataloggers') ? 'DL-1' : '1').replace('{name}', 'dashboard.css'),
    )
    expect(paths.length).toBeGreaterThan(15)
    const window = 'start_datetime=2025-05-02%2000:00:00&end_datetime=2025-05-02%2023:45:00'
    let requests = 0
    const statuses = new Set<number>()
    for (const key of keys) {
      for (const path of paths) {
        const query = path.startsWith('/data/') ? `?${window}&data_format=csv` : ''
        // the header, and the mistakes clients make: a key in the query string, in a wrong header
        for (const [target, headers] of [
          [`${path}${query}`, { 'x-api-key': key }],
          [`${path}${query}${query ? '&' : '?'}api_key=${key}`, {}],
          [path, { authorization: `Bearer ${key}` }],
        ] as Array<[string, Record<string, string>]>) {
          const response = await fetch(`${server.url}${target}`, { headers })
          // an event stream stays open: its headers and first event are its answer
          if (response.headers.get('content-type')?.startsWith('text/event-stream')) await response.body?.cancel()
          else await response.arrayBuffer()
          statuses.add(response.status)
          requests++
        }
      }
    }
    expect([...statuses]).toEqual(expect.arrayContaining([200, 401, 403]))

    const { stdout: dump } = await run('pg_dump', ['--data-only', '--no-owner', database.url], {
      maxBuffer: 512 * 1024 * 1024,
    })
    expect(dump).toContain('COPY public.api_keys')
    await server.stop()
    const logs = server.logs.join('\n')
    // the requests were logged (one line each), the query-string keys replaced
    expect(server.logs.length).toBeGreaterThan(requests)
    expect(logs).toContain('api_key=[REDACTED]')
    for (const key of keys) {
      expect(dump).not.toContain(secretPart(key))
      expect(logs).not.toContain(secretPart(key))
    }
    process.stdout.write(
      `energy secrets: ${paths.length} endpoints, ${requests} requests with ${keys.length} keys (statuses ${[...statuses].sort().join(',')}); ` +
        `pg_dump ${(dump.length / 1024).toFixed(0)} kB and ${server.logs.length} log lines hold none of them\n`,
    )
  })
})
