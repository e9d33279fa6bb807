import { createHash, randomBytes } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { createDatabase, type Database } from '../db/database.ts'
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../db/embedded-server.ts'
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
 * A data set a test file starts from, made once per run (and kept between runs, see TEMPLATE_DIR)
 * instead of once per file: `name` says what `fill` writes, which must depend on nothing else
 * (no clock, no random seed of its own). A change to any package's source makes it again.
 */
export interface DataSet<DB> {
  name: string
  fill(database: TestDatabase<DB>): Promise<void>
}

const REPO = fileURLToPath(new URL('../../../../', import.meta.url))

/** The packages' source, hashed once per process: a data set is made by that code. */
let sources: string | undefined
function sourceDigest(): string {
  if (sources) return sources
  const hash = createHash('sha256')
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else hash.update(path.slice(REPO.length)).update(readFileSync(path))
    }
  }
  for (const pkg of readdirSync(join(REPO, 'packages')).sort()) {
    const src = join(REPO, 'packages', pkg, 'src')
    if (existsSync(src)) walk(src)
  }
  sources = hash.digest('hex')
  return sources
}

/** Names a template: the migration set, and the data set over it (`extra`: the embedded engine's version). */
function templateDigest(migrationsDir: string, data: string | undefined, extra: string[] = []): string {
  const files = readMigrations(migrationsDir)
  return createHash('sha256')
    .update([...extra, ...files.map((f) => f.checksum), ...(data ? [data, sourceDigest()] : [])].join(','))
    .digest('hex')
    .slice(0, data ? 24 : 12)
}

/** A database of a shared server as a test database whose close leaves the database be (a template being made). */
function kept<DB>(url: string): TestDatabase<DB> {
  const database = createDatabase<DB>(url, { max: 4 })
  return { ...database, kind: 'postgres', close: () => database.close() }
}

/**
 * A migrated template per migration set, made once under an advisory lock, then a copy per
 * test file: `CREATE DATABASE ... TEMPLATE` costs tens of milliseconds instead of a migration run.
 * A data set gets a template of its own, copied from the migrated one and filled outside the lock.
 */
async function fromServer<DB>(
  serverUrl: string,
  service: string,
  migrationsDir: string,
  data?: DataSet<DB>,
): Promise<TestDatabase<DB>> {
  const files = readMigrations(migrationsDir)
  const digest = templateDigest(migrationsDir, undefined)
  const template = `tpl_${service}_${digest}`
  const filled = data && `tpl_${service}_${digest}_${templateDigest(migrationsDir, data.name).slice(0, 12)}`
  const name = `test_${service}_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  const locked = async <T>(work: () => Promise<T>): Promise<T> => {
    await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK])
    try {
      return await work()
    } finally {
      await admin.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK])
    }
  }
  const exists = async (db: string) =>
    ((await admin.query('select 1 from pg_database where datname = $1', [db])).rowCount ?? 0) > 0
  try {
    const building = await locked(async () => {
      if (!(await exists(template))) {
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
          'select datname from pg_database where datname like $1 and datname not like $2',
          [`tpl\\_${service}\\_%`, `${template}%`],
        )
        for (const row of stale.rows) await admin.query(`drop database if exists ${quote(row.datname)} with (force)`)
      }
      if (!filled || (await exists(filled))) return undefined
      const building = `${filled}_${randomBytes(3).toString('hex')}`
      await admin.query(`create database ${quote(building)} template ${quote(template)}`)
      return building
    })
    if (filled && building) {
      const target = kept<DB>(withDatabase(serverUrl, building))
      try {
        await data.fill(target)
      } finally {
        await target.close()
      }
      await locked(async () => {
        if (await exists(filled)) await admin.query(`drop database ${quote(building)} with (force)`)
        else {
          // a pool's connection may still be closing on the server's side: a template has no sessions
          const sessions = 'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1'
          for (let i = 0; i < 50 && ((await admin.query(sessions, [building])).rowCount ?? 0) > 0; i++) await sleep(100)
          await admin.query(`alter database ${quote(building)} rename to ${quote(filled)}`)
        }
      })
    }
    await locked(() => admin.query(`create database ${quote(name)} template ${quote(filled ?? template)}`))
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
 * Dumps kept of each data set: one is made again at every change of a package's source, so a day
 * of edits would leave dozens (120 MB each); two serve a switch between branches.
 */
const DATA_SET_DUMPS_KEPT = 2

/** The file of a data set's dump: its name, then the digest of what made it. */
const dataSetFile = (migrationsDir: string, name: string): string =>
  join(
    TEMPLATE_DIR,
    `set-${name.replace(/[^\w.-]+/g, '_')}-${templateDigest(migrationsDir, name, [pgliteVersion()])}.tar`,
  )

/** After a dump is written: what was unused for a week goes, and all but the latest dumps of each data set. */
function pruneTemplates(): void {
  const now = Date.now()
  const entries = readdirSync(TEMPLATE_DIR).map((name) => ({
    name,
    path: join(TEMPLATE_DIR, name),
    used: statSync(join(TEMPLATE_DIR, name), { throwIfNoEntry: false })?.mtimeMs ?? now,
  }))
  const seen = new Map<string, number>()
  for (const entry of entries.sort((a, b) => b.used - a.used)) {
    const set = /^(set-.+)-[0-9a-f]{24}\.tar$/.exec(entry.name)?.[1]
    const rank = set === undefined ? 0 : (seen.get(set) ?? 0) + 1
    if (set !== undefined) seen.set(set, rank)
    if (now - entry.used > TEMPLATE_KEPT_MS || rank > DATA_SET_DUMPS_KEPT) rmSync(entry.path, { force: true })
  }
}

/**
 * The migrated data directory of a migration set, dumped once (per PGlite version and set of
 * migration files: the digest is its name) and loaded by every test database of that set. Two
 * processes that miss it at once both build it, each writing a file of its own and renaming it.
 */
async function pgliteTemplate(migrationsDir: string): Promise<Blob> {
  const files = readMigrations(migrationsDir)
  const file = join(TEMPLATE_DIR, `${templateDigest(migrationsDir, undefined, [pgliteVersion()])}.tar`)
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
    pruneTemplates()
    return dump
  } finally {
    await server.close()
  }
}

/**
 * An embedded PostgreSQL holding nothing, for tests of the embedded server itself: loaded from
 * the dumped template of no migrations (kept as the others are), not made by initdb each time.
 */
export async function startEmptyEmbeddedPostgres(): Promise<EmbeddedPostgres> {
  const none = mkdtempSync(join(tmpdir(), 'no-migrations-'))
  try {
    return await startEmbeddedPostgres({ loadDataDir: await pgliteTemplate(none) })
  } finally {
    rmSync(none, { recursive: true, force: true })
  }
}

async function fromPglite<DB>(migrationsDir: string, data?: DataSet<DB>): Promise<TestDatabase<DB>> {
  const file = data && dataSetFile(migrationsDir, data.name)
  const cached = file && existsSync(file) ? new Blob([readFileSync(file)]) : undefined
  if (file && cached) utimesSync(file, new Date(), new Date())
  const server = await startEmbeddedPostgres({ loadDataDir: cached ?? (await pgliteTemplate(migrationsDir)) })
  const database = createDatabase<DB>(server.url, { max: 4 })
  const test: TestDatabase<DB> = {
    ...database,
    kind: 'pglite',
    close: async () => {
      await database.close()
      await server.close()
    },
  }
  if (data && file && !cached) {
    await filledOrClosed(test, data)
    const written = `${file}.${process.pid}.tmp`
    writeFileSync(written, Buffer.from(await (await server.pglite.dumpDataDir('none')).arrayBuffer()))
    renameSync(written, file)
    pruneTemplates()
  }
  return test
}

/**
 * A fresh, migrated database for one test file, holding `data` when given: a new database on
 * `TEST_DATABASE_URL` when set; else a TimescaleDB container when a Docker engine answers; else
 * in-memory PGlite. Says in one line which it used.
 */
export async function createTestDatabase<DB>(
  service: string,
  migrationsDir: string,
  data?: DataSet<DB>,
): Promise<TestDatabase<DB>> {
  const serverUrl = process.env.TEST_DATABASE_URL
  let database = serverUrl ? await fromServer<DB>(serverUrl, service, migrationsDir, data) : undefined
  if (!database) {
    database = await fromContainer<DB>(migrationsDir)
    if (database && data) await filledOrClosed(database, data)
  }
  database ??= await fromPglite<DB>(migrationsDir, data)
  const where =
    database.kind === 'postgres'
      ? `PostgreSQL ${new URL(database.url).pathname.slice(1)}`
      : `${database.kind} (set TEST_DATABASE_URL to use a PostgreSQL server)`
  process.stdout.write(`[test-db] ${service}: ${where}${data ? `, data set ${data.name}` : ''}\n`)
  return database
}

async function filledOrClosed<DB>(database: TestDatabase<DB>, data: DataSet<DB>): Promise<void> {
  try {
    await data.fill(database)
  } catch (error) {
    await database.close()
    throw error
  }
}
