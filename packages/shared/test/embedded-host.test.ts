import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { openServiceDatabase } from '../src/db/open.ts'

describe('embedded database directory ownership', () => {
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
