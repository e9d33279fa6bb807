import type { ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** A comment line on an idle event stream, so proxies and clients see it alive. */
const HEARTBEAT_MS = 15_000

export interface EventStream {
  write(event: string, data: unknown): void
}

/**
 * Server-sent event streams of a route plugin: `open` takes a reply over from Fastify (it stays
 * open) and `stop` runs once the client goes. Streams never end by themselves, so the app ends
 * them as it closes: a graceful stop does not wait for clients that would never leave.
 */
export function eventStreams(app: FastifyInstance) {
  const open = new Set<ServerResponse>()
  app.addHook('preClose', async () => {
    for (const raw of open) raw.end()
  })
  return {
    open(request: FastifyRequest, reply: FastifyReply, stop: () => void): EventStream {
      reply.hijack()
      const raw = reply.raw
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': String(request.id),
      })
      raw.write('retry: 2000\n\n')
      open.add(raw)
      const heartbeat = setInterval(() => raw.write(': alive\n\n'), HEARTBEAT_MS)
      heartbeat.unref()
      raw.on('close', () => {
        // a hijacked reply skips the onResponse hook: the stream writes its access-log line itself
        request.log.info({ req: request, res: { statusCode: 200 }, responseTime: reply.elapsedTime }, 'request')
        open.delete(raw)
        clearInterval(heartbeat)
        stop()
      })
      return {
        write(event, data) {
          if (!raw.writableEnded) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
        },
      }
    },
  }
}
