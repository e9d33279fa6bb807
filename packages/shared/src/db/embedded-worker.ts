/**
 * A worker thread that owns one embedded PGlite and serves it on a loopback port. PGlite's
 * work is synchronous WebAssembly: on its own thread it neither blocks the owning process's
 * event loop nor waits behind another embedded database (two of them use both cores).
 */
import { parentPort, Worker, workerData } from 'node:worker_threads'
import { startEmbeddedPostgres } from './embedded-server.ts'

type Ready = { url: string; port: number } | { error: string }

if (parentPort && workerData?.embeddedPostgres) {
  const port = parentPort
  startEmbeddedPostgres({ dataDir: workerData.dataDir as string }).then(
    (server) => {
      port.postMessage({ url: server.url, port: server.port } satisfies Ready)
      port.once('message', async () => {
        await server.close()
        port.postMessage('closed')
        port.close()
      })
    },
    (error: unknown) => port.postMessage({ error: error instanceof Error ? error.message : String(error) }),
  )
}

export interface WorkerEmbeddedPostgres {
  readonly url: string
  readonly port: number
  close(): Promise<void>
}

/** Starts the embedded database for `dataDir` in its own thread. */
export function startEmbeddedPostgresWorker(dataDir: string): Promise<WorkerEmbeddedPostgres> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { embeddedPostgres: true, dataDir } })
  return new Promise((resolve, reject) => {
    worker.once('error', reject)
    worker.once('message', (message: Ready) => {
      if ('error' in message) {
        void worker.terminate()
        reject(new Error(message.error))
        return
      }
      let closing: Promise<void> | undefined
      resolve({
        url: message.url,
        port: message.port,
        close() {
          closing ??= new Promise<void>((done) => {
            worker.once('message', () => done())
            worker.once('exit', () => done())
            worker.postMessage('close')
          })
          return closing
        },
      })
    })
  })
}
