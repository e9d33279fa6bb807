/**
 * Where a running stack (`pnpm start`) says its services answer: `<DATA_DIR>/stack.json`,
 * written once they listen and removed when it stops. Command lines that are clients of the
 * running services (`pnpm energy login`, `export`, `pnpm demo`) read it, so they follow the
 * ports the stack was started with, whatever the shell they run in.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { DEFAULT_DATA_DIR, DEFAULT_HOST } from '../config.ts'

export interface StackAnnouncement {
  /** The stack's process. */
  pid: number
  /** Each service's base URL, by service name. */
  urls: Record<string, string>
}

const dataDirOf = (env: NodeJS.ProcessEnv) => env.DATA_DIR || DEFAULT_DATA_DIR

export const stackFile = (dataDir: string): string => resolve(dataDir, 'stack.json')

/** Written by the stack once every service answers; removed when this process exits. */
export function announceStack(dataDir: string, urls: Record<string, string>): void {
  const file = stackFile(dataDir)
  writeFileSync(file, `${JSON.stringify({ pid: process.pid, urls } satisfies StackAnnouncement, null, 2)}\n`)
  process.on('exit', () => rmSync(file, { force: true }))
}

/**
 * Whether process `pid` is alive and, when `command` is given, runs it (on Linux, read in /proc:
 * a pid reused since by another program is not the one meant).
 */
export function liveProcess(pid: number, command?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    if (command === undefined || !existsSync('/proc/self')) return true
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(command)
  } catch {
    return false // gone, or gone between the two looks
  }
}

/** The announcement of a stack whose process is alive, or undefined. */
export function runningStack(env: NodeJS.ProcessEnv = process.env): StackAnnouncement | undefined {
  let announced: StackAnnouncement
  try {
    announced = JSON.parse(readFileSync(stackFile(dataDirOf(env)), 'utf8')) as StackAnnouncement
  } catch {
    return undefined // no file, or a torn one
  }
  // a stack that died without removing it is none
  return liveProcess(announced.pid) ? announced : undefined
}

/**
 * Where the service named `name` answers, for a client on this machine: its port variable when
 * set (with `HOST`), else the running stack's announcement, else its default port.
 */
export function serviceUrl(
  service: { name: string; portEnv: string; defaultPort: number },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const port = env[service.portEnv]
  const listening = env.HOST || DEFAULT_HOST
  // a service listening on every interface answers on loopback
  const host = listening === '0.0.0.0' || listening === '::' ? '127.0.0.1' : listening
  const base = (p: string | number) => `http://${host.includes(':') ? `[${host}]` : host}:${p}`
  if (port) return base(port)
  return runningStack(env)?.urls[service.name] ?? base(service.defaultPort)
}
