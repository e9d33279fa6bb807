import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { openServiceDatabase } from '../src/db/open.ts'

const migrateCli = fileURLToPath(new URL('../src/cli/migrate.ts', import.meta.url))

describe('embedded database directory ownership', () => {
  it('one process serves the directory; a command run meanwhile joins it instead of opening it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'embedded-'))
    const owner = await openServiceDatabase({ service: 'energy', dataDir })
    try {
      expect(owner.description).toContain('owned by this process')
      const announced = JSON.parse(readFileSync(join(dataDir, 'energy', 'server.json'), 'utf8'))
      expect(announced).toEqual({ pid: process.pid, url: owner.url })

      // another process (the migration command) while this one holds the directory; it must run
      // asynchronously, since this process is the one serving the database
      const result = await promisify(execFile)(process.execPath, ['--experimental-strip-types', migrateCli, 'energy'], {
        env: { ...process.env, DATA_DIR: dataDir, ENERGY_DATABASE_URL: '' },
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(result.stderr).toBe('')
      const report = JSON.parse(result.stdout)
      expect(report.energy.database).toContain('served by another process')
      expect(report.energy.applied.length).toBeGreaterThan(0)

      // ...and its work is visible here
      const applied = await sql<{ n: number }>`select count(*) as n from schema_migrations`.execute(owner.db)
      expect(applied.rows[0]?.n).toBe(report.energy.applied.length)

      // a second open in the same process joins too
      const again = await openServiceDatabase({ service: 'energy', dataDir })
      expect(again.description).toContain('served by another process')
      await again.close()
    } finally {
      await owner.close()
    }
    expect(existsSync(join(dataDir, 'energy', 'server.json'))).toBe(false)
  })

  it('takes over a directory whose announced owner is gone', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'embedded-'))
    mkdirSync(join(dataDir, 'oauth'), { recursive: true })
    // a pid far above any pid_max that this kernel hands out
    writeFileSync(
      join(dataDir, 'oauth', 'server.json'),
      JSON.stringify({ pid: 2 ** 30, url: 'postgres://x@127.0.0.1:1/x' }),
    )
    const database = await openServiceDatabase({ service: 'oauth', dataDir })
    try {
      expect(database.description).toContain('owned by this process')
      expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }])
    } finally {
      await database.close()
    }
  })
})
