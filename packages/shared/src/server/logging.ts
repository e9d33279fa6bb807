import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { createRequire } from 'node:module'
import type { Duplex } from 'node:stream'
import type { FastifyReply, FastifyServerOptions, LogController } from 'fastify'
import type { ErrorFormat } from '../errors.ts'

/** Query parameters whose values are credentials and never reach a log line. */
const SECRET_PARAMS = new Set([
  'bearer_token',
  'access_token',
  'refresh_token',
  'token',
  'code',
  'client_secret',
  'password',
  'private_token',
  'code_verifier',
  'api_key',
  'device_code',
  'user_code',
])

/** The URL with every credential-bearing query value replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?')
  if (q < 0) return url
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=')
      const name = eq < 0 ? pair : pair.slice(0, eq)
      let decoded = name
      try {
        decoded = decodeURIComponent(name)
      } catch {
        // keep the raw name
      }
      if (SECRET_PARAMS.has(decoded.toLowerCase())) return `${name}=[REDACTED]`
      // a value that is a URL of its own (return_to=/oauth/device?user_code=...) is redacted inside
      let inner: string
      try {
        inner = decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, ' '))
      } catch {
        return pair
      }
      if (eq < 0 || !inner.includes('?')) return pair
      const redacted = redactUrl(inner)
      return redacted === inner ? pair : `${name}=${encodeURIComponent(redacted)}`
    })
  return `${url.slice(0, q)}?${params.join('&')}`
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/

/**
 * Requests Node's HTTP parser rejects (bytes outside the grammar, bad framing) never reach
 * Fastify's error handler; answer them in the service's error shape too.
 */
function clientErrorHandler(errors: ErrorFormat | undefined) {
  return (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return
    if (error.code === 'ECONNRESET') {
      socket.destroy()
      return
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW'
    const status = tooLarge ? 431 : 400
    const message = tooLarge ? 'Request header fields too large' : 'Malformed HTTP request'
    const body = JSON.stringify(errors ? errors.clientError(status, message).body() : { message })
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    )
  }
}

export interface ServerNetworkOptions {
  /**
   * Reverse proxies (addresses or CIDR ranges) whose X-Forwarded-For is believed: `request.ip`
   * is then the client's address, the rightmost one no trusted proxy added. Default: none, so a
   * client cannot choose its own address by sending the header.
   */
  trustedProxies?: readonly string[]
}

/** Options every service's Fastify instance is created with: logging, request ids, limits. */
export function serverOptions(
  service: string,
  logLevel: string,
  errors?: ErrorFormat,
  network: ServerNetworkOptions = {},
): FastifyServerOptions {
  return {
    trustProxy: network.trustedProxies?.length ? [...network.trustedProxies] : false,
    clientErrorHandler: clientErrorHandler(errors),
    // a URL the router cannot decode (FST_ERR_BAD_URL) answers in the service's error shape too
    ...(errors
      ? {
          frameworkErrors: ((error, _request, reply) => {
            const status = error.statusCode ?? 400
            const answer = errors.clientError(status, status === 400 ? 'Malformed URL' : 'Bad request')
            void (reply as FastifyReply).code(status).send(answer.body())
          }) satisfies NonNullable<FastifyServerOptions['frameworkErrors']>,
        }
      : {}),
    logger:
      logLevel === 'silent'
        ? false
        : {
            level: logLevel,
            base: { service },
            redact: {
              paths: [
                'req.headers.authorization',
                'req.headers["x-api-key"]',
                'req.headers["private-token"]',
                'req.headers.cookie',
                'res.headers["set-cookie"]',
                '*.password',
                '*.client_secret',
                '*.access_token',
                '*.bearer_token',
                '*.refresh_token',
                '*.code',
                '*.token',
                '*.device_code',
                '*.user_code',
              ],
              censor: '[REDACTED]',
            },
            serializers: {
              req: (req: { method: string; url: string; ip?: string }) => ({
                method: req.method,
                url: redactUrl(req.url),
                remoteAddress: req.ip,
              }),
            },
          },
    // An incoming x-request-id is kept when it is short and plain, so traces join across services.
    requestIdHeader: false,
    genReqId: (req: IncomingMessage) => {
      const incoming = req.headers['x-request-id']
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID()
    },
    // one line per request, written by the platform's onResponse hook with method, URL and status
    logController: new (createRequire(import.meta.url)('fastify').LogController as typeof LogController)({
      disableRequestLogging: true,
    }),
    bodyLimit: 1024 * 1024,
    connectionTimeout: 60_000,
    requestTimeout: 120_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: true, strictNumbers: true } },
  }
}
