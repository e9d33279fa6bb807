/**
 * A PostgreSQL primary and its streaming standby, of the machine's own PostgreSQL programs, each
 * in a folder of its own (initdb; the standby a pg_basebackup of the primary), on loopback ports:
 * `pnpm cluster up` runs them, and the tests that restart the primary or read from the standby.
 * PostgreSQL refuses to run as root: under root the servers run as the `postgres` user.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { alive } from './rabbitmq.ts'

const run = promisify(execFile)

/** The newest PostgreSQL's programs Debian installed (initdb is not on PATH there), or undefined. */
export function postgresPrograms(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && Number(v) >= 15 && existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] ? join(root, versions[0], 'bin') : undefined
}

export interface PostgresServer {
  role: 'primary' | 'standby'
  url: string
  port: number
  dir: string
  pid: number
  log: string
}

/** Under root, the user the servers run as. */
async function serverUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim())
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim())
  return { uid, gid }
}

function chownTree(path: string, owner: { uid: number; gid: number }): void {
  chownSync(path, owner.uid, owner.gid)
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name)
    if (entry.isDirectory()) chownTree(child, owner)
    else chownSync(child, owner.uid, owner.gid)
  }
}

export class PostgresPair {
  private readonly bin: string
  private readonly dir: string
  private readonly ports: { primary: number; standby: number }
  private readonly children = new Map<'primary' | 'standby', ChildProcess>()
  private owner: { uid: number; gid: number } | undefined

  constructor(dir: string, ports: { primary: number; standby: number }) {
    const bin = postgresPrograms()
    if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql)')
    this.bin = bin
    this.dir = dir
    this.ports = ports
  }

  private dataDir(role: 'primary' | 'standby'): string {
    return join(this.dir, role)
  }

  url(role: 'primary' | 'standby', database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.ports[role]}/${database}`
  }

  private async as(program: string, args: string[]): Promise<void> {
    await run(join(this.bin, program), args, {
      ...(this.owner ? { uid: this.owner.uid, gid: this.owner.gid } : {}),
      env: { PATH: process.env.PATH, LANG: 'C.UTF-8', PGPASSWORD: '' },
      timeout: 120_000,
    })
  }

  /** initdb of the primary (once), then its start; a standby made from it (once), then its start. */
  async start(options: { standby: boolean; detached?: boolean }): Promise<PostgresServer[]> {
    this.owner = await serverUser()
    mkdirSync(this.dir, { recursive: true })
    if (this.owner) chownTree(this.dir, this.owner)
    const primary = this.dataDir('primary')
    if (!existsSync(join(primary, 'PG_VERSION'))) {
      await this.as('initdb', ['-D', primary, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync'])
      writeFileSync(
        join(primary, 'postgresql.auto.conf'),
        [
          "listen_addresses = '127.0.0.1'",
          `unix_socket_directories = '${this.dir}'`,
          'wal_level = replica',
          'max_wal_senders = 10',
          'hot_standby = on',
          // the standby tells the primary what it still reads: no query on it cancelled by a vacuum
          'hot_standby_feedback = on',
          'max_connections = 200',
          'fsync = on',
          '',
        ].join('\n'),
      )
      // trust on loopback only, replication included (a private cluster on one machine)
      writeFileSync(
        join(primary, 'pg_hba.conf'),
        'local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n',
      )
      if (this.owner) chownTree(primary, this.owner)
    }
    const servers = [await this.startServer('primary', options.detached)]
    if (options.standby) {
      const standby = this.dataDir('standby')
      if (!existsSync(join(standby, 'PG_VERSION'))) {
        // -R writes standby.signal and the primary's conninfo: it streams from it from the start
        await this.as('pg_basebackup', [
          '-h',
          '127.0.0.1',
          '-p',
          String(this.ports.primary),
          '-U',
          'postgres',
          '-D',
          standby,
          '-R',
          '-X',
          'stream',
          '--no-sync',
        ])
      }
      servers.push(await this.startServer('standby', options.detached))
    }
    return servers
  }

  /** Starts one server (its data directory made), waits until it answers queries. */
  async startServer(role: 'primary' | 'standby', detached = false): Promise<PostgresServer> {
    const dataDir = this.dataDir(role)
    const log = join(this.dir, `${role}.log`)
    const out = openSync(log, 'a')
    if (this.owner) chownSync(log, this.owner.uid, this.owner.gid)
    const child = spawn(
      join(this.bin, 'postgres'),
      ['-D', dataDir, '-p', String(this.ports[role]), '-c', `unix_socket_directories=${this.dir}`],
      {
        ...(this.owner ? { uid: this.owner.uid, gid: this.owner.gid } : {}),
        env: { PATH: process.env.PATH, LANG: 'C.UTF-8' },
        stdio: ['ignore', out, out],
        detached,
      },
    )
    if (detached) child.unref()
    this.children.set(role, child)
    const deadline = Date.now() + 60_000
    for (;;) {
      if (child.exitCode !== null) {
        throw new Error(`PostgreSQL ${role} exited (${child.exitCode}): ${readFileSync(log, 'utf8').slice(-2000)}`)
      }
      const client = new pg.Client({ connectionString: this.url(role) })
      const ok = await client
        .connect()
        .then(() => client.query('select 1'))
        .then(() => true)
        .catch(() => false)
      await client.end().catch(() => undefined)
      if (ok) break
      if (Date.now() > deadline)
        throw new Error(`PostgreSQL ${role} not up in time: ${readFileSync(log, 'utf8').slice(-2000)}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    return { role, url: this.url(role), port: this.ports[role], dir: dataDir, pid: this.pid(role) ?? 0, log }
  }

  /** The postmaster's pid as it wrote it. */
  pid(role: 'primary' | 'standby'): number | undefined {
    const file = join(this.dataDir(role), 'postmaster.pid')
    if (!existsSync(file)) return this.children.get(role)?.pid
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0])
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  }

  /** Stops one server: SIGINT (fast shutdown), or SIGKILL for a crash; resolves once it is gone. */
  async stopServer(role: 'primary' | 'standby', signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
    const pid = this.pid(role)
    if (!pid || !alive(pid)) return
    process.kill(pid, signal)
    const deadline = Date.now() + 30_000
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    if (alive(pid)) process.kill(pid, 'SIGKILL')
    while (alive(pid)) await new Promise((r) => setTimeout(r, 100))
  }

  async stop(): Promise<void> {
    await this.stopServer('standby')
    await this.stopServer('primary')
  }
}
