/** `pnpm db:migrate` while another process holds an embedded database directory. */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { openServiceDatabase } from '@campus/shared'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

const migrateCli = fileURLToPath(new URL('../src/migrate.ts', import.meta.url))

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
})
