import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { answersAt } from '../net.ts'
import { startEmbeddedPostgresWorker, type WorkerEmbeddedPostgres } from './embedded-worker.ts'

/**
 * A PGlite directory may be opened by one process only. The process that opens it (the
 * `pnpm start` stack, a lone service, or a command) serves it on a loopback port and
 * announces that in `<dataDir>/<service>/server.json`; every other process connects there.
 */
interface Announcement {
  pid: number
  url?: string
}

export interface EmbeddedLocation {
  readonly url: string
  /** Present when this process owns the directory; closing releases it. */
  readonly host?: { release(): Promise<void> }
}

export function serviceDataDir(dataDir: string, service: string): string {
  const base = isAbsolute(dataDir) ? dataDir : resolve(process.cwd(), dataDir)
  return join(base, service)
}

function readAnnouncement(file: string): Announcement | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Announcement
  } catch {
    return undefined
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Connects to the process serving this directory, or becomes that process. */
export async function locateEmbedded(dataDir: string, service: string): Promise<EmbeddedLocation> {
  const dir = serviceDataDir(dataDir, service)
  const file = join(dir, 'server.json')
  mkdirSync(dir, { recursive: true })
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const found = readAnnouncement(file)
    if (found && alive(found.pid)) {
      if (found.url && (await answersAt(found.url))) return { url: found.url }
      if (found.pid !== process.pid) {
        await sleep(200) // the owner is still starting
        continue
      }
    }
    if (found) rmSync(file, { force: true }) // left by a process that died
    try {
      writeFileSync(file, JSON.stringify({ pid: process.pid }), { flag: 'wx' })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EEXIST') continue // another process won the race; read its announcement
      throw error
    }
    let server: WorkerEmbeddedPostgres
    try {
      server = await startEmbeddedPostgresWorker(join(dir, 'pglite'))
    } catch (error) {
      rmSync(file, { force: true })
      throw error
    }
    writeFileSync(file, JSON.stringify({ pid: process.pid, url: server.url }))
    const release = async () => {
      await server.close()
      const current = readAnnouncement(file)
      if (current?.pid === process.pid) rmSync(file, { force: true })
    }
    return { url: server.url, host: { release } }
  }
  throw new Error(`the embedded ${service} database at ${dir} is held by another process that does not answer`)
}
