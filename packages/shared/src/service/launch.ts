/**
 * The one way to run a service as its own process, from its descriptor: the `pnpm start` stack,
 * the tests that need a real process (signals, several instances, memory) and the benchmarks.
 * The child gets the service's Node flags, and its output line by line.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'
import type { ServiceDescriptor } from './descriptor.ts'

/** Node flags every launch adds: TypeScript entry points, no warning about type stripping. */
const TYPESCRIPT = ['--experimental-strip-types', '--disable-warning=ExperimentalWarning']

export interface SpawnOptions {
  /** The server (default), or the command line with `args`. */
  entry?: 'server' | 'cli'
  args?: readonly string[]
  /** Variables set for the child, over this process's own unless `inheritEnv` is false. */
  env?: Record<string, string | undefined>
  /** False: the child sees only PATH, HOME and `env` (nothing of this process leaks in). */
  inheritEnv?: boolean
  /** Instead of the descriptor's production flags (a benchmark or a memory test trying others). */
  nodeOptions?: readonly string[]
  /** Restart on file changes (`pnpm dev`). */
  watch?: boolean
  /** Each line the child writes, as it comes. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void
  /** How much output `output()` keeps from the start (characters); later output is dropped. */
  maxOutput?: number
}

/** A service (or one of its commands) running as a child process. */
export interface ServiceProcess {
  readonly child: ChildProcess
  /** Everything it wrote on stdout and stderr so far (up to `maxOutput`). */
  output(): string
  /** Resolves with the exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>
  /** Resident set size now, bytes (Linux). */
  rss(): number
  /** Sends `signal` (SIGTERM by default) and waits for the exit; SIGKILL after `timeoutMs`. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>
}

export function spawnService(descriptor: ServiceDescriptor, options: SpawnOptions = {}): ServiceProcess {
  const entry = options.entry === 'cli' ? descriptor.cliEntry : descriptor.serverEntry
  const nodeOptions = options.nodeOptions ?? (options.entry === 'cli' ? [] : descriptor.nodeOptions)
  const base = options.inheritEnv === false ? { PATH: process.env.PATH, HOME: process.env.HOME } : process.env
  // a server stops when this process is gone (listenUntilSignalled), its watcher included
  const supervisor = { SUPERVISOR_PID: String(process.pid), SUPERVISOR_WATCH: options.watch ? '1' : undefined }
  const child = spawn(
    process.execPath,
    [...nodeOptions, ...TYPESCRIPT, ...(options.watch ? ['--watch'] : []), entry, ...(options.args ?? [])],
    { env: { ...base, ...supervisor, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const maxOutput = options.maxOutput ?? 64 * 1024 * 1024
  let output = ''
  for (const stream of ['stdout', 'stderr'] as const) {
    const readable = child[stream]
    if (!readable) continue
    readable.on('data', (chunk: Buffer) => {
      if (output.length < maxOutput) output += chunk.toString('utf8')
    })
    const onLine = options.onLine
    if (onLine) createInterface({ input: readable }).on('line', (line) => onLine(line, stream))
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let done = false
  void exited.then(() => {
    done = true
  })
  return {
    child,
    output: () => output,
    exited,
    rss: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
    },
    async stop(signal = 'SIGTERM', timeoutMs = 20_000) {
      if (done) return exited
      child.kill(signal)
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
      try {
        return await exited
      } finally {
        clearTimeout(timer)
      }
    },
  }
}

/** A loopback port the kernel just handed out and released (the child binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

export interface LaunchOptions extends Omit<SpawnOptions, 'entry' | 'args'> {
  /** Default: a free loopback port. */
  port?: number
  /** Default 127.0.0.1. */
  host?: string
  /** What must answer 200 before the launch counts as done (default `/health/ready`). */
  readyPath?: string
  timeoutMs?: number
  /** The process as soon as it is spawned, before it is ready: a supervisor stopping meanwhile stops it too. */
  onSpawn?: (service: ServiceProcess) => void
}

/** A listening service process. */
export interface RunningService extends ServiceProcess {
  readonly url: string
  readonly port: number
}

/**
 * Starts the service's server with its port and host set, and waits until `readyPath` answers
 * 200; a child that exits first, or is not ready in time (it is then killed), fails the launch
 * with the end of its output.
 */
export async function launchService(
  descriptor: ServiceDescriptor,
  options: LaunchOptions = {},
): Promise<RunningService> {
  const port = options.port ?? (await freePort())
  const host = options.host ?? '127.0.0.1'
  const running = spawnService(descriptor, {
    ...options,
    env: { HOST: host, ...options.env, [descriptor.portEnv]: String(port) },
  })
  options.onSpawn?.(running)
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  let exited = false
  void running.exited.then(() => {
    exited = true
  })
  const timeoutMs = options.timeoutMs ?? 30_000
  const deadline = Date.now() + timeoutMs
  // its output, or where it went (a caller that keeps none has shown it line by line)
  const said = () => {
    const tail = running.output().slice(-4000)
    if (tail) return `:\n${tail}`
    return options.maxOutput === 0 ? ' (its output, if any, is above)' : ' (it printed nothing)'
  }
  for (;;) {
    if (exited) throw new Error(`${descriptor.title} exited before it was ready${said()}`)
    const ok = await fetch(url + (options.readyPath ?? '/health/ready'))
      .then((r) => r.status === 200)
      .catch(() => false)
    if (ok) return { ...running, url, port }
    if (Date.now() > deadline) {
      running.child.kill('SIGKILL')
      throw new Error(`${descriptor.title} not ready within ${timeoutMs / 1000} s${said()}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** How a command of a service's command line ended. */
export interface CommandResult {
  /** The exit code (null when a signal ended it). */
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs the service's command line to its end without blocking this process, so a database
 * this process serves (the embedded one, in tests) keeps answering the command meanwhile.
 * `input` is its standard input (a pipe that ends after it; empty by default).
 */
export function runServiceCommand(
  descriptor: ServiceDescriptor,
  args: readonly string[],
  options: { env?: Record<string, string | undefined>; input?: string } = {},
): Promise<CommandResult> {
  const child = spawn(process.execPath, [...TYPESCRIPT, descriptor.cliEntry, ...args], {
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const out: Buffer[] = []
  const err: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
  child.stdin.on('error', () => {}) // a command that exits before reading its input
  child.stdin.end(options.input ?? '')
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    )
  })
}
