import type { FastifyInstance } from 'fastify'

/**
 * Listens and stops cleanly: on SIGTERM/SIGINT the server stops accepting (new requests get
 * 503), finishes in-flight requests, runs its onClose hooks (database pool), then exits 0.
 */
export async function listenUntilSignalled(
  app: FastifyInstance,
  options: { port: number; host: string; shutdownTimeoutMs?: number },
): Promise<void> {
  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'shutting down')
    const timeout = setTimeout(() => {
      app.log.error('shutdown took too long; exiting')
      process.exit(1)
    }, options.shutdownTimeoutMs ?? 25_000)
    timeout.unref()
    // server.close() reaps only the keep-alive connections idle at that instant; those whose
    // request was still in flight would otherwise hold the process until their keep-alive timeout
    const reaper = setInterval(() => app.server.closeIdleConnections(), 100)
    reaper.unref()
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down')
        process.exit(1)
      },
    )
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
  await app.listen({ port: options.port, host: options.host })
}
