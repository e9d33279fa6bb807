import { connect } from 'node:net'

export interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/**
 * One HTTP/1.1 exchange written byte for byte on a fresh connection: unlike fetch or
 * node:http, nothing refuses control characters, repeated parameters or a lying
 * Content-Length, so hostile requests reach the server exactly as an attacker sends them.
 */
export function rawRequest(
  port: number,
  request: { method: string; target: string; headers?: Array<[string, string]>; body?: string | Buffer },
  timeoutMs = 10_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const body = request.body === undefined ? undefined : Buffer.from(request.body)
    const lines = [`${request.method} ${request.target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close']
    for (const [name, value] of request.headers ?? []) lines.push(`${name}: ${value}`)
    if (body && !(request.headers ?? []).some(([n]) => n.toLowerCase() === 'content-length')) {
      lines.push(`Content-Length: ${body.length}`)
    }
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no complete answer within ${timeoutMs} ms`)))
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      try {
        resolve(parse(Buffer.concat(chunks)))
      } catch (error) {
        reject(error)
      }
    })
    socket.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'))
    if (body) socket.write(body)
  })
}

function parse(raw: Buffer): RawResponse {
  const split = raw.indexOf('\r\n\r\n')
  if (split < 0) throw new Error(`incomplete response (${raw.length} bytes)`)
  const [statusLine, ...headerLines] = raw.subarray(0, split).toString('latin1').split('\r\n')
  const status = Number(statusLine?.split(' ')[1])
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  let payload = raw.subarray(split + 4)
  if (headers['transfer-encoding']?.includes('chunked')) payload = dechunk(payload)
  return { status, headers, body: payload.toString('utf8') }
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = []
  let offset = 0
  while (offset < data.length) {
    const end = data.indexOf('\r\n', offset)
    if (end < 0) break
    const size = Number.parseInt(data.subarray(offset, end).toString('latin1'), 16)
    if (!size) break
    parts.push(data.subarray(end + 2, end + 2 + size))
    offset = end + 2 + size + 2
  }
  return Buffer.concat(parts)
}
