/**
 * The embedded default killed outright: `pnpm energy import` and `pnpm energy key:create` as an
 * operator runs them on a PGlite directory (`DATA_DIR`, no database URL: the command owns the
 * directory while it runs). An import is killed with SIGKILL at a random moment; then the server
 * starts on the same directory: it opens, every key a command printed works, and each import is
 * whole or absent (it is one transaction), never half there.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { launchService, openServiceDatabase, runServiceCommand, spawnService } from '@campus/shared'
import { afterAll, describe, expect, it } from 'vitest'
import type { EnergyDatabase } from '../../src/db/schema.ts'
import { energyService } from '../../src/service.ts'
import { sleep } from '../harness.ts'

const KILLS = 3
const dir = mkdtempSync(join(tmpdir(), 'energy-crash-'))
const env = { DATA_DIR: dir, LOG_LEVEL: 'silent' }
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A wide water file of `rows` quarter hours from 2000-01-01, each of the given value. */
function waterFile(name: string, rows: number, value: number): string {
  const start = Date.parse('2000-01-01T00:00:00Z')
  const lines = ['time_15m,tot_sede_centrale']
  for (let i = 0; i < rows; i++) lines.push(`${new Date(start + i * 900_000).toISOString()},${value}`)
  const path = join(dir, name)
  writeFileSync(path, `${lines.join('\n')}\n`)
  return path
}

describe('SIGKILL of a command on the embedded database, in the middle of an import', () => {
  it('reopens with every printed key working and each import whole or absent', async () => {
    const ROWS = 60_000
    const keys: string[] = []
    const outcomes: string[] = []
    for (let kill = 0; kill < KILLS; kill++) {
      const created = await runServiceCommand(
        energyService,
        ['key:create', '--name', `crash-${kill}`, '--endpoint', '*'],
        { env },
      )
      expect(created.code).toBe(0)
      keys.push((JSON.parse(created.stdout) as { key: string }).key)

      // each import writes its own value: what is found after tells which import it was
      const file = waterFile(`water-${kill}.csv`, ROWS, kill + 1)
      const importing = spawnService(energyService, { entry: 'cli', args: ['import', file], env, inheritEnv: false })
      // the command takes about 1.5 s to start and 2.5 s to write 60,000 rows here: most kills land mid-write
      const after = 1200 + Math.floor(Math.random() * 2800)
      await Promise.race([sleep(after), importing.exited])
      importing.child.kill('SIGKILL')
      const code = await importing.exited
      outcomes.push(code === 0 ? `import ${kill} finished before the kill` : `killed after ${after} ms`)
    }

    const server = await launchService(energyService, { env, inheritEnv: false, timeoutMs: 60_000 })
    try {
      for (const key of keys) {
        const res = await fetch(`${server.url}/auth/protected`, { headers: { 'x-api-key': key } })
        expect(res.status).toBe(200)
      }
      const database = await openServiceDatabase<EnergyDatabase>({ service: energyService.name, dataDir: dir })
      try {
        const byValue = await database.db
          .selectFrom('water_15m')
          .select(['tot_sede_centrale as value', (eb) => eb.fn.countAll<number>().as('rows')])
          .groupBy('tot_sede_centrale')
          .execute()
        // a later import replaces an earlier one's rows: each value left counts the whole file
        for (const { value, rows } of byValue) expect([value, Number(rows)]).toEqual([value, ROWS])
        const finished = outcomes.flatMap((o, i) => (o.includes('finished') ? [i + 1] : []))
        const last = finished.at(-1)
        expect(byValue.map((r) => r.value)).toEqual(last === undefined ? [] : [last])
        process.stdout.write(
          `energy crash (embedded, SIGKILL x${KILLS}): ${outcomes.join('; ')}; ${keys.length} printed keys work; ` +
            `water rows by import: ${JSON.stringify(byValue)}\n`,
        )
      } finally {
        await database.close()
      }
    } finally {
      await server.stop()
    }
  })
})
