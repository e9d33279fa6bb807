import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A loopback TCP proxy a test controls: `cut()` drops every connection and refuses new ones
 * (the database "goes away"), `restore()` lets traffic through again; `slow(ms)` holds each
 * answer of the target that long before passing it on (a database under load).
 */
export interface TcpProxy {
  readonly port: number
  /** The target URL rewritten to go through the proxy. */
  rewrite(url: string): string
  cut(): void
  restore(): void
  slow(ms: number): void
  close(): Promise<void>
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let open = true
  let delayMs = 0
  const pairs = new Set<[Socket, Socket]>()
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy()
      return
    }
    const upstream = connect(targetPort, targetHost)
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    const drop = () => {
      client.destroy()
      upstream.destroy()
      pairs.delete(pair)
    }
    client.on('error', drop).on('close', drop)
    upstream.on('error', drop).on('close', drop)
    client.pipe(upstream)
    // answers in the order they came, each held `delayMs` (and never before the one ahead of it)
    let due = 0
    upstream.on('data', (chunk: Buffer) => {
      due = Math.max(due, Date.now() + delayMs)
      if (due <= Date.now()) client.write(chunk)
      else setTimeout(() => client.destroyed || client.write(chunk), due - Date.now())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const address = server.address()
  if (address === null || typeof address !== 'object') throw new Error('proxy did not bind')
  const proxy: TcpProxy = {
    port: address.port,
    rewrite(url: string) {
      const u = new URL(url)
      u.hostname = '127.0.0.1'
      u.port = String(address.port)
      return u.toString()
    },
    cut() {
      open = false
      for (const [a, b] of pairs) {
        a.destroy()
        b.destroy()
      }
      pairs.clear()
    },
    restore() {
      open = true
    },
    slow(ms: number) {
      delayMs = ms
    },
    close() {
      proxy.cut()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  return proxy
}
