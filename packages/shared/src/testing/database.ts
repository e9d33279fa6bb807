import { createHash, randomBytes } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import pg from 'pg'
import { createDatabase, type Database } from '../db/database.ts'
import { startEmbeddedPostgres } from '../db/embedded-server.ts'
import { migrate, readMigrations } from '../db/migrator.ts'
import { quoteIdentifier } from '../db/provision.ts'

export type TestDatabaseKind = 'postgres' | 'testcontainers' | 'pglite'

export interface TestDatabase<DB> extends Database<DB> {
  readonly kind: TestDatabaseKind
  /** Drops the database (or stops the container / embedded instance). */
  close(): Promise<void>
}

const quote = quoteIdentifier

function withDatabase(url: string, name: string): string {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

/** Serialises the making and dropping of templates across every test process on one server. */
const TEMPLATE_LOCK = 727274002

/** Drops every migrated template on the server `admin` is connected to (the end of a run). */
export async function dropTemplates(admin: pg.Client): Promise<void> {
  await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK])
  try {
    const templates = await admin.query<{ datname: string }>(
      "select datname from pg_database where datname like 'tpl\\_%'",
    )
    for (const row of templates.rows) await admin.query(`drop database if exists ${quote(row.datname)} with (force)`)
  } finally {
    await admin.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK])
  }
}

/**
 * A migrated template per migration set, made once under an advisory lock, then a copy per
 * test file: `CREATE DATABASE ... TEMPLATE` costs tens of milliseconds instead of a migration run.
 */
async function fromServer<DB>(serverUrl: string, service: string, migrationsDir: string): Promise<TestDatabase<DB>> {
  const files = readMigrations(migrationsDir)
  const digest = createHash('sha256')
    .update(files.map((f) => f.checksum).join(','))
    .digest('hex')
    .slice(0, 12)
  const template = `tpl_${service}_${digest}`
  const name = `test_${service}_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK])
    try {
      const exists = await admin.query('select 1 from pg_database where datname = $1', [template])
      if (exists.rowCount === 0) {
        const building = `${template}_build`
        await admin.query(`drop database if exists ${quote(building)} with (force)`)
        await admin.query(`create database ${quote(building)}`)
        const target = createDatabase(withDatabase(serverUrl, building), { max: 1 })
        try {
          await migrate(target.db, files)
        } finally {
          await target.close()
        }
        await admin.query(`alter database ${quote(building)} rename to ${quote(template)}`)
        // templates of older migration sets are of no further use
        const stale = await admin.query<{ datname: string }>(
          'select datname from pg_database where datname like $1 and datname <> $2',
          [`tpl\\_${service}\\_%`, template],
        )
        for (const row of stale.rows) await admin.query(`drop database if exists ${quote(row.datname)} with (force)`)
      }
      await admin.query(`create database ${quote(name)} template ${quote(template)}`)
    } finally {
      await admin.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK])
    }
  } finally {
    await admin.end()
  }
  const database = createDatabase<DB>(withDatabase(serverUrl, name), { max: 10 })
  return {
    ...database,
    kind: 'postgres',
    close: async () => {
      await database.close()
      const cleanup = new pg.Client({ connectionString: serverUrl })
      await cleanup.connect()
      try {
        await cleanup.query(`drop database if exists ${quote(name)} with (force)`)
      } finally {
        await cleanup.end()
      }
    },
  }
}

function dockerMayAnswer(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock')
}

/** The migrated database a throwaway server serves at `url`; closing it stops that server too. */
async function migratedOn<DB>(
  url: string,
  max: number,
  kind: TestDatabaseKind,
  stop: () => Promise<unknown>,
  migrationsDir: string,
): Promise<TestDatabase<DB>> {
  const database = createDatabase<DB>(url, { max })
  await migrate(database.db, readMigrations(migrationsDir))
  return {
    ...database,
    kind,
    close: async () => {
      await database.close()
      await stop()
    },
  }
}

async function fromContainer<DB>(migrationsDir: string): Promise<TestDatabase<DB> | undefined> {
  if (!dockerMayAnswer()) return undefined
  try {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
    const container = await new PostgreSqlContainer('timescale/timescaledb:latest-pg16').start()
    return await migratedOn<DB>(
      container.getConnectionUri(),
      10,
      'testcontainers',
      () => container.stop(),
      migrationsDir,
    )
  } catch {
    return undefined // no working container runtime
  }
}

/**
 * Where migrated PGlite data directories are kept between runs (`node_modules/.cache`, beside
 * what other tools cache): initdb and the migrations cost seconds of WebAssembly per database,
 * loading a dumped directory a fraction of that.
 */
const TEMPLATE_DIR = fileURLToPath(new URL('../../../../node_modules/.cache/campus-test-databases/', import.meta.url))

/** The PGlite this package pins (a data directory is read by the PGlite that wrote it). */
const pgliteVersion = (): string =>
  (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>
    }
  ).dependencies['@electric-sql/pglite'] as string

/** A template unused this long is removed when another is made (older migration sets, other branches). */
const TEMPLATE_KEPT_MS = 7 * 86_400_000

/**
 * The migrated data directory of a migration set, dumped once (per PGlite version and set of
 * migration files: the digest is its name) and loaded by every test database of that set. Two
 * processes that miss it at once both build it, each writing a file of its own and renaming it.
 */
async function pgliteTemplate(migrationsDir: string): Promise<Blob> {
  const files = readMigrations(migrationsDir)
  const digest = createHash('sha256')
    .update([pgliteVersion(), ...files.map((f) => f.checksum)].join(','))
    .digest('hex')
    .slice(0, 16)
  const file = join(TEMPLATE_DIR, `${digest}.tar`)
  if (existsSync(file)) {
    const now = new Date()
    utimesSync(file, now, now)
    return new Blob([readFileSync(file)])
  }
  const server = await startEmbeddedPostgres()
  try {
    const database = createDatabase(server.url, { max: 1 })
    try {
      await migrate(database.db, files)
    } finally {
      await database.close()
    }
    const dump = await server.pglite.dumpDataDir('none')
    mkdirSync(TEMPLATE_DIR, { recursive: true })
    const written = `${file}.${process.pid}.tmp`
    writeFileSync(written, Buffer.from(await dump.arrayBuffer()))
    renameSync(written, file)
    for (const name of readdirSync(TEMPLATE_DIR)) {
      const path = join(TEMPLATE_DIR, name)
      const used = statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()
      if (Date.now() - used > TEMPLATE_KEPT_MS) rmSync(path, { force: true })
    }
    return dump
  } finally {
    await server.close()
  }
}

async function fromPglite<DB>(migrationsDir: string): Promise<TestDatabase<DB>> {
  // PGlite is a 9 MB WebAssembly module: a test process lives seconds, too short for V8's optimizing
  // tier to pay for itself (it doubles the CPU time of a start); the baseline compiler alone is faster here
  setFlagsFromString('--liftoff-only')
  const server = await startEmbeddedPostgres({ loadDataDir: await pgliteTemplate(migrationsDir) })
  const database = createDatabase<DB>(server.url, { max: 4 })
  return {
    ...database,
    kind: 'pglite',
    close: async () => {
      await database.close()
      await server.close()
    },
  }
}

/**
 * A fresh, migrated database for one test file: a new database on `TEST_DATABASE_URL` when
 * set; else a TimescaleDB container when a Docker engine answers; else in-memory PGlite.
 * Says in one line which it used.
 */
export async function createTestDatabase<DB>(service: string, migrationsDir: string): Promise<TestDatabase<DB>> {
  const serverUrl = process.env.TEST_DATABASE_URL
  const database = serverUrl
    ? await fromServer<DB>(serverUrl, service, migrationsDir)
    : ((await fromContainer<DB>(migrationsDir)) ?? (await fromPglite<DB>(migrationsDir)))
  const where =
    database.kind === 'postgres'
      ? `PostgreSQL ${new URL(database.url).pathname.slice(1)}`
      : `${database.kind} (set TEST_DATABASE_URL to use a PostgreSQL server)`
  process.stdout.write(`[test-db] ${service}: ${where}\n`)
  return database
}
