/** `pnpm db:migrate`: while another process holds an embedded database directory, and on a PostgreSQL server. */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createDatabase, openServiceDatabase } from '@campus/shared'
import { needsService } from '@campus/shared/testing'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

const migrateCli = fileURLToPath(new URL('../src/migrate.ts', import.meta.url))

describe('the command line', () => {
  it('--help prints the usage (exit 0); an unknown service is a usage mistake (exit 2), opening nothing', async () => {
    const run = (...args: string[]) =>
      promisify(execFile)(process.execPath, ['--experimental-strip-types', migrateCli, ...args], {
        env: { ...process.env, DATA_DIR: join(tmpdir(), 'never-opened'), npm_config_user_agent: 'npm/11.0.0' },
        encoding: 'utf8',
      }).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      )
    const help = await run('--help')
    expect([help.code, help.stdout, help.stderr]).toEqual([
      0,
      'usage: npm run db:migrate -- [oauth|energy]...  (every service when none is named)\n',
      '',
    ])
    const wrong = await run('energy', 'nergy')
    expect([wrong.code, wrong.stdout]).toEqual([2, ''])
    expect(wrong.stderr).toBe(`error: unknown service "nergy"\n${help.stdout}`)
    expect(existsSync(join(tmpdir(), 'never-opened'))).toBe(false)
  })
})

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

const serverUrl = process.env.TEST_DATABASE_URL
const onServer = await needsService('db:migrate on a PostgreSQL server', 'TEST_DATABASE_URL')

describe.runIf(onServer)('pnpm db:migrate on a PostgreSQL server', () => {
  const named = (name: string, user?: string) => {
    const u = new URL(serverUrl ?? '')
    u.pathname = `/${name}`
    if (user) u.username = user
    return u.toString()
  }
  const admin = () => createDatabase(serverUrl ?? '', { max: 1 }).pool
  const migrateOn = (url: string) =>
    promisify(execFile)(process.execPath, ['--experimental-strip-types', migrateCli, 'energy'], {
      env: { ...process.env, ENERGY_DATABASE_URL: url },
      encoding: 'utf8',
    })

  it('creates a database the URL names that does not exist yet, then migrates it', async () => {
    const name = `migrate_new_${randomBytes(4).toString('hex')}`
    const client = admin()
    try {
      const result = await migrateOn(named(name))
      const report = JSON.parse(result.stdout)
      expect(report.energy.created).toBe(true)
      expect(report.energy.applied.length).toBeGreaterThan(0)
      const again = JSON.parse((await migrateOn(named(name))).stdout)
      expect(again.energy).not.toHaveProperty('created')
      expect(again.energy.applied).toEqual([])
    } finally {
      await client.query(`drop database if exists ${name} with (force)`)
      await client.end()
    }
  })

  it('says in one line how to create it when the role may not', async () => {
    const name = `migrate_new_${randomBytes(4).toString('hex')}`
    const role = `no_createdb_${randomBytes(4).toString('hex')}`
    const client = admin()
    try {
      await client.query(`create role ${role} login nocreatedb`)
      const failed = await migrateOn(named(name, role)).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      )
      expect(failed?.code).toBe(1)
      const lines = failed?.stderr.trim().split('\n') ?? []
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain(`database "${name}" does not exist`)
      expect(lines[0]).toContain(`${role} may not create databases`)
      expect(lines[0]).toContain(`createdb -h`)
      const exists = await client.query('select 1 from pg_database where datname = $1', [name])
      expect(exists.rowCount).toBe(0)
    } finally {
      await client.query(`drop role if exists ${role}`)
      await client.end()
    }
  })
})
