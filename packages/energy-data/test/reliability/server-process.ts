import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { service } from '@campus/shared'

/** Heap sizing of the production service (see docs/RELIABILITY.md); ENERGY_TEST_NODE_FLAGS overrides. */
export const PRODUCTION_NODE_FLAGS = (
  process.env.ENERGY_TEST_NODE_FLAGS ?? '--max-semi-space-size=4 --max-old-space-size=192'
)
  .split(' ')
  .filter(Boolean)

export interface ServerProcess {
  child: ChildProcess
  base: string
  /** Every line the process wrote on stdout and stderr so far. */
  logs: string[]
  /** Resident set size now, bytes. */
  rss(): number
  /** Resolves with the exit code. */
  exited: Promise<number | null>
  stop(): Promise<number | null>
}

/** Starts `packages/energy-data/src/server.ts` as its own process on a random loopback port. */
export function startEnergyProcess(
  env: Record<string, string>,
  nodeFlags = PRODUCTION_NODE_FLAGS,
): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      '--experimental-strip-types',
      '--disable-warning=ExperimentalWarning',
      service('energy').serverEntry,
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ENERGY_PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        MIGRATE_ON_START: 'false',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const logs: string[] = []
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  createInterface({ input: child.stderr! }).on('line', (text) => logs.push(text))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start within 30 s:\n${logs.join('\n')}`)), 30_000)
    void exited.then((code) => reject(new Error(`service exited ${code}:\n${logs.join('\n')}`)))
    createInterface({ input: child.stdout! }).on('line', (text) => {
      logs.push(text)
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(text)
      if (match) {
        clearTimeout(timer)
        resolve({
          child,
          base: match[1] as string,
          logs,
          exited,
          rss: () => rssOf(child.pid as number),
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
            return exited
          },
        })
      }
    })
  })
}

export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
}
