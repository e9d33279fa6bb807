import { mkdirSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket'
import { TransactionQueue } from './embedded-queue.ts'

export interface EmbeddedPostgres {
  /** postgres:// URL any pg client can use. */
  readonly url: string
  readonly port: number
  readonly pglite: PGlite
  close(): Promise<void>
}

/**
 * Serves one PGlite instance over the PostgreSQL wire protocol on a loopback port,
 * so every part of the project talks to it through `pg`, exactly as to a real server.
 * `dataDir` persists it; without one it lives in memory (tests), empty or, with `loadDataDir`,
 * a copy of a data directory dumped earlier (`pglite.dumpDataDir()`: no initdb).
 */
export async function startEmbeddedPostgres(
  options: { dataDir?: string; loadDataDir?: Blob; port?: number; host?: string } = {},
): Promise<EmbeddedPostgres> {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true })
  const pglite = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  })
  const queue = new TransactionQueue(pglite)
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    const handler = new PGLiteSocketHandler({
      // Structural match for pglite-socket's queue: ours keeps a client's transaction whole.
      queryQueue: queue as unknown as ConstructorParameters<typeof PGLiteSocketHandler>[0]['queryQueue'],
      closeOnDetach: true,
    })
    handler.attach(socket).catch(() => socket.destroy())
  })
  const host = options.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, host, () => resolve())
  })
  const address = server.address()
  if (address === null || typeof address !== 'object') throw new Error('embedded database did not bind a port')
  let closing: Promise<void> | undefined
  return {
    url: `postgres://postgres@${host}:${address.port}/postgres`,
    port: address.port,
    pglite,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          for (const socket of sockets) socket.destroy()
        })
        await pglite.close()
      })()
      return closing
    },
  }
}
