/**
 * What every contender of bench/ingest.ts is: a writer of live samples into a table keyed by meter
 * and instant, on a fresh scratch database (and, over MQTT, a topic root and share group of its
 * own), started as its own process; and what they share: the scratch database, the child process,
 * its CPU time.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { quoteIdentifier } from '../../packages/shared/src/db/provision.ts'
import { BENCH_SERVER_URL } from '../support.ts'

export interface Contender {
  /** Its column in the printed table. */
  readonly name: string
  /** The database it writes (its own), and the table there that holds one row per sample. */
  readonly databaseUrl: string
  readonly table: string
  /** Its process, whose CPU time is the contender's (psql's own per load, for the COPY). */
  readonly pid?: number
  /** Over MQTT: the first level of the topics it subscribes to (`<root>/<datalogger>/senml`). */
  readonly topicRoot?: string
  /** Over MQTT on brokers of its own (the cluster): where and as whom the fleet publishes to it. */
  readonly broker?: { mqtt: readonly string[]; username: string; password: string }
  /** Without MQTT: loads `csv` (meter_id,at,reading,value lines) itself and says what it cost. */
  load?(csv: string): Promise<{ seconds: number; processCpu: number; databaseCpu: number }>
  stop(): Promise<void>
}

/** The application names of the bench's own connections: never counted as a contender's backends. */
export const BENCH_APPLICATION_PREFIX = 'bench-'
export const DRIVER_APPLICATION = `${BENCH_APPLICATION_PREFIX}driver`

/** The columns and key of `meter_samples` (migrations/energy/0006): what each peer writes into. */
const KEYED_TABLE = `(
  meter_id integer not null,
  at timestamptz not null,
  reading text not null check (reading in ('value', 'register')),
  value double precision not null,
  received_at timestamptz not null default now(),
  primary key (meter_id, at)
)`

/** A fresh database `bench_<label>_<pid>` on the bench's server holding the keyed table `samples`. */
export async function scratchDatabase(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `bench_${label}_${process.pid}`
  const admin = new pg.Client({ connectionString: BENCH_SERVER_URL, application_name: DRIVER_APPLICATION })
  await admin.connect()
  try {
    await admin.query(`drop database if exists ${quoteIdentifier(name)} with (force)`)
    await admin.query(`create database ${quoteIdentifier(name)}`)
  } finally {
    await admin.end()
  }
  const url = new URL(BENCH_SERVER_URL)
  url.pathname = `/${name}`
  const client = new pg.Client({ connectionString: url.toString(), application_name: DRIVER_APPLICATION })
  await client.connect()
  try {
    await client.query(`create table samples ${KEYED_TABLE}`)
  } finally {
    await client.end()
  }
  return {
    url: url.toString(),
    drop: async () => {
      const cleanup = new pg.Client({ connectionString: BENCH_SERVER_URL, application_name: DRIVER_APPLICATION })
      await cleanup.connect()
      try {
        await cleanup.query(`drop database if exists ${quoteIdentifier(name)} with (force)`)
      } finally {
        await cleanup.end()
      }
    },
  }
}

/** A peer taking MQTT: its process writing into the keyed table of its scratch database. */
export function mqttPeer(
  name: string,
  database: { url: string; drop: () => Promise<void> },
  program: ContenderProcess,
  topicRoot: string,
  cleanup: () => void = () => {},
): Contender {
  return {
    name,
    databaseUrl: database.url,
    table: 'samples',
    pid: program.child.pid,
    topicRoot,
    stop: async () => {
      await program.stop()
      cleanup()
      await database.drop()
    },
  }
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux this runs on). */
const TICKS = 100

/** User plus system CPU seconds `pid` has used so far; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the fields after the command name (which may hold spaces) start with the state, field 3
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS
  } catch {
    return 0
  }
}

/** The user plus system CPU seconds in a `/proc/<pid>/stat` line (psql prints its own and its backend's). */
export function cpuOfStatLine(line: string): number {
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS
}

/** A contender's process: its lines go to stderr prefixed with its name when they look like trouble. */
export interface ContenderProcess {
  readonly child: ChildProcess
  /** The output so far (the first 64 kB), for a start that fails. */
  output(): string
  /** SIGTERM, then SIGKILL after 10 s; resolves once it has exited. */
  stop(): Promise<void>
}

/** Preloaded into every contender process: it exits when the bench is gone, even killed outright. */
export const EXIT_WITH_BENCH = fileURLToPath(new URL('./exit-with-bench.ts', import.meta.url))

export function spawnContender(
  label: string,
  args: readonly string[],
  env: Record<string, string>,
  trouble: RegExp,
): ContenderProcess {
  const child = spawn(
    process.execPath,
    ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', '--import', EXIT_WITH_BENCH, ...args],
    { env: { ...process.env, ...env, BENCH_PID: String(process.pid) }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let output = ''
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      if (output.length < 65_536) output += chunk.toString('utf8')
    })
    createInterface({ input: stream }).on('line', (line) => {
      if (trouble.test(line)) process.stderr.write(`${label}: ${line}\n`)
    })
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}
