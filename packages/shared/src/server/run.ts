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
  stopWithSupervisor(app)
}

/**
 * A service launched by a supervisor (the stack, a test: `SUPERVISOR_PID`, set by the launcher)
 * stops when that process is gone, even killed outright; under `--watch` (`SUPERVISOR_WATCH`)
 * it stops its watcher, which stops it in turn and exits, instead of waiting for file changes.
 */
function stopWithSupervisor(app: FastifyInstance): void {
  const supervisor = Number(process.env.SUPERVISOR_PID)
  if (!Number.isInteger(supervisor) || supervisor <= 0) return
  const check = setInterval(() => {
    try {
      process.kill(supervisor, 0)
    } catch {
      clearInterval(check)
      app.log.warn({ supervisor }, 'the process that launched this service is gone; stopping')
      process.kill(process.env.SUPERVISOR_WATCH ? process.ppid : process.pid, 'SIGTERM')
    }
  }, 1000)
  check.unref()
}
