import type { ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { answersAt } from '../net.ts'

/**
 * Whether tests that need an outside service (Redis, a PostgreSQL server, an MQTT broker) should
 * run: the server named by the environment variable `variable` must answer. Only a server named
 * so is used: one that happens to listen at a default address (a developer's own Redis or
 * broker) is not touched unasked. They always run under CI, which provides the services, so a
 * missing one fails loudly there; elsewhere they are skipped with one line naming the variable.
 */
export async function needsService(what: string, variable: string): Promise<boolean> {
  const url = process.env[variable]
  if (url && (await answersAt(url))) return true
  if (process.env.CI) return true
  const why = url ? `nothing answers at ${new URL(url).host}` : `${variable} is not set`
  process.stdout.write(
    `[test] ${what} skipped (${why}): set ${variable} to a server that answers, e.g. ${variable}=${example[variable] ?? '...'}; CI runs them\n`,
  )
  return false
}

const example: Record<string, string> = {
  TEST_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
  REDIS_URL: 'redis://127.0.0.1:6379',
  TEST_MQTT_URL: 'mqtt://127.0.0.1:1883',
}

/**
 * A program for a server of a test's own (`mosquitto`), on PATH or in the system folders Debian
 * puts daemons in (/usr/sbin is off a user's PATH); undefined when not installed.
 */
export function serverProgram(name: string): string | undefined {
  return [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/sbin', '/usr/local/sbin']
    .map((dir) => join(dir, name))
    .find((file) => existsSync(file))
}

/**
 * Stops a server a test started and waits for it to exit: a server saves its state as it stops
 * (Mosquitto its sessions, Alertmanager its silences), so its data folder can go only afterwards.
 */
export async function stopServerProgram(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill(signal)
  await exited
}
