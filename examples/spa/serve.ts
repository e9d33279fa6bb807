/**
 * Serves the single-page application (public/) as any static host would, plus `config.js` with
 * where the services are. Nothing of the OAuth flow runs here: the browser does it all.
 *
 *   CLIENT_ID=... API_KEY=... [ISSUER=...] [DATA_API=...] [PORT=5173] npm run example:spa
 *
 * ISSUER and DATA_API default to where the running `npm start` announced its services
 * (`.data/stack.json`), else to the default ports.
 *
 * Register a public application (no secret) with the redirect URI http://127.0.0.1/callback
 * (loopback redirects may use any port) and scope read_user; create an API key with /data/*.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { serviceUrl } from '@campus/shared/running-stack'

export interface SpaOptions {
  issuer: string
  clientId: string
  dataApi: string
  apiKey: string
  port?: number
}

const file = (path: string) => readFileSync(fileURLToPath(new URL(path, import.meta.url)))

export async function startSpa(options: SpaOptions): Promise<{ url: string; close(): Promise<void> }> {
  const index = file('./public/index.html')
  const files: Record<string, { type: string; body: Buffer | string }> = {
    '/': { type: 'text/html', body: index },
    // the redirect URI: the same page, which finds the code in its address
    '/callback': { type: 'text/html', body: index },
    '/app.js': { type: 'text/javascript', body: file('./public/app.js') },
    '/oauth4webapi.js': { type: 'text/javascript', body: file(import.meta.resolve('oauth4webapi')) },
    '/config.js': {
      type: 'text/javascript',
      body: `export default ${JSON.stringify({
        issuer: options.issuer,
        clientId: options.clientId,
        dataApi: options.dataApi,
        apiKey: options.apiKey,
      })}\n`,
    },
  }
  const server = createServer((request, response) => {
    const served = files[new URL(request.url ?? '/', 'http://x').pathname]
    if (!served) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    response
      .writeHead(200, { 'content-type': `${served.type}; charset=utf-8`, 'cache-control': 'no-store' })
      .end(served.body)
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const env = (name: string, fallback?: string) => {
    const value = process.env[name] || fallback
    if (!value) {
      console.error(`${name} is required: see examples/spa/README.md`)
      process.exit(2)
    }
    return value
  }
  // the stack this checkout runs, wherever it was started from (its DATA_DIR unless one is set)
  const stack = {
    ...process.env,
    DATA_DIR: process.env.DATA_DIR || fileURLToPath(new URL('../../.data', import.meta.url)),
  }
  const spa = await startSpa({
    issuer: env('ISSUER', serviceUrl({ name: 'oauth', portEnv: 'OAUTH_PORT', defaultPort: 3000 }, stack)),
    clientId: env('CLIENT_ID'),
    dataApi: env('DATA_API', serviceUrl({ name: 'energy', portEnv: 'ENERGY_PORT', defaultPort: 8000 }, stack)),
    apiKey: env('API_KEY'),
    port: Number(process.env.PORT ?? 5173),
  })
  console.log(`single-page application at ${spa.url}`)
}
