/**
 * A third-party web application using the OAuth server, as its developers would write it with a
 * standard client (oauth4webapi): "Sign in" runs the authorization-code flow with PKCE and shows
 * /api/v4/user; "Implicit flow" gets a token in the URL fragment, which a page script reads.
 *
 *   CLIENT_ID=... CLIENT_SECRET=... [ISSUER=...] [PORT=8080] npm run example:web-client
 *
 * ISSUER defaults to where the running `npm start` announced the OAuth server
 * (`.data/stack.json`), else to the default port.
 *
 * Register the application with the redirect URIs http://127.0.0.1/callback and
 * http://127.0.0.1/implicit/callback (loopback redirects may use any port) and scope read_user.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { serviceUrl } from '@campus/shared/running-stack'
import * as oauth from 'oauth4webapi'

export interface ExampleOptions {
  issuer: string
  clientId: string
  /** omitted for a public client */
  clientSecret?: string | undefined
  scope?: string
  port?: number
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
const page = (title: string, body: string, script = '') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>${script}</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`

/** What went wrong, in the OAuth error codes a developer looks up. */
async function explain(error: unknown): Promise<string> {
  if (error instanceof oauth.ResponseBodyError) return `${error.error}: ${error.error_description ?? ''}`
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    // a 401 from the token endpoint carries the RFC 6749 error in its body
    const body = (await error.response.json().catch(() => ({}))) as { error?: string; error_description?: string }
    return `${body.error ?? error.cause[0]?.parameters.error ?? 'unauthorized'}: ${body.error_description ?? ''}`
  }
  return String(error)
}

const profile = (me: { username: string }) =>
  page(
    `Signed in as ${me.username}`,
    `<pre id="user">${escapeHtml(JSON.stringify(me, null, 2))}</pre><p><a href="/me">Reload my profile</a></p>`,
  )

const IMPLICIT_SCRIPT = `const params = new URLSearchParams(location.hash.slice(1))
history.replaceState(null, '', location.pathname)
const out = document.getElementById('result')
fetch('/implicit/user', { method: 'POST', body: JSON.stringify({ access_token: params.get('access_token'), state: params.get('state') }) })
  .then((r) => r.json()).then((user) => { out.textContent = 'Signed in as ' + user.username; document.getElementById('user').textContent = JSON.stringify(user, null, 2) })
  .catch(() => { out.textContent = 'The token was refused.' })`

export async function startExample(options: ExampleOptions): Promise<{ url: string; close(): Promise<void> }> {
  const issuer = new URL(options.issuer)
  // plain http only for a server on this machine (tests, local development)
  const insecure = { [oauth.allowInsecureRequests]: issuer.protocol === 'http:' }
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  )
  const client: oauth.Client = { client_id: options.clientId }
  const auth = options.clientSecret ? oauth.ClientSecretBasic(options.clientSecret) : oauth.None()
  const pending = new Map<string, string>() // state -> PKCE verifier (one per sign-in attempt)
  const implicitStates = new Set<string>()
  const sessions = new Map<string, string>() // this app's session id -> access token, to call the API later
  let base = ''

  async function user(accessToken: string) {
    const response = await oauth.protectedResourceRequest(
      accessToken,
      'GET',
      new URL('/api/v4/user', issuer),
      new Headers(),
      null,
      insecure,
    )
    if (!response.ok) throw new Error(`api/v4/user answered ${response.status}`)
    return (await response.json()) as { username: string }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', base)
    const send = (status: number, html: string) =>
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(html)
    if (url.pathname === '/') {
      return send(
        200,
        page(
          'Example client',
          '<p><a href="/login">Sign in with Campus</a></p><p><a href="/implicit">Sign in with the implicit flow</a></p>',
        ),
      )
    }
    if (url.pathname === '/login') {
      const verifier = oauth.generateRandomCodeVerifier()
      const state = oauth.generateRandomState()
      pending.set(state, verifier)
      const target = new URL(as.authorization_endpoint as string)
      target.search = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: `${base}/callback`,
        response_type: 'code',
        scope: options.scope ?? 'read_user',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString()
      return res.writeHead(303, { location: target.href }).end()
    }
    if (url.pathname === '/callback') {
      const state = url.searchParams.get('state') ?? ''
      const verifier = pending.get(state)
      pending.delete(state)
      if (!verifier) return send(400, page('Sign-in failed', '<p>Unknown or reused state.</p>'))
      const params = oauth.validateAuthResponse(as, client, url, state)
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        params,
        `${base}/callback`,
        verifier,
        insecure,
      )
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response)
      const me = await user(tokens.access_token)
      const sid = oauth.generateRandomState()
      sessions.set(sid, tokens.access_token)
      res.setHeader('set-cookie', `example_sid=${sid}; Path=/; HttpOnly; SameSite=Lax`)
      return send(200, profile(me))
    }
    if (url.pathname === '/me') {
      const sid = /(?:^|;\s*)example_sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1]
      const token = sid ? sessions.get(sid) : undefined
      const me = token ? await user(token).catch(() => undefined) : undefined
      if (!me) return send(401, page('Not signed in', '<p id="error">The server refused the token: sign in again.</p>'))
      return send(200, profile(me))
    }
    if (url.pathname === '/implicit') {
      const state = oauth.generateRandomState()
      implicitStates.add(state)
      const target = new URL(as.authorization_endpoint as string)
      target.search = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: `${base}/implicit/callback`,
        response_type: 'token',
        scope: options.scope ?? 'read_user',
        state,
      }).toString()
      return res.writeHead(303, { location: target.href }).end()
    }
    if (url.pathname === '/implicit/callback') {
      return send(
        200,
        page(
          'Implicit flow',
          '<p id="result">Reading the token…</p><pre id="user"></pre>',
          '<script src="/implicit.js" defer></script>',
        ),
      )
    }
    if (url.pathname === '/implicit.js')
      return res.writeHead(200, { 'content-type': 'text/javascript' }).end(IMPLICIT_SCRIPT)
    if (url.pathname === '/implicit/user' && req.method === 'POST') {
      let body = ''
      for await (const chunk of req) body += chunk
      const { access_token: token, state } = JSON.parse(body) as { access_token?: string; state?: string }
      if (!token || !state || !implicitStates.delete(state)) return res.writeHead(400).end('{}')
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(await user(token)))
    }
    return send(404, page('Not found', ''))
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(async (error: unknown) => {
      const message = await explain(error)
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/html; charset=utf-8' })
      res.end(page('Sign-in failed', `<p id="error">${escapeHtml(message)}</p>`))
    })
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url: base, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!process.env.CLIENT_ID) {
    console.error(
      'CLIENT_ID is required (and CLIENT_SECRET for a confidential application): see examples/oauth-web-client/README.md',
    )
    process.exit(2)
  }
  const example = await startExample({
    issuer:
      process.env.ISSUER ??
      serviceUrl(
        { name: 'oauth', portEnv: 'OAUTH_PORT', defaultPort: 3000 },
        // the stack this checkout runs, wherever it was started from (its DATA_DIR unless one is set)
        { ...process.env, DATA_DIR: process.env.DATA_DIR || fileURLToPath(new URL('../../.data', import.meta.url)) },
      ),
    clientId: process.env.CLIENT_ID,
    clientSecret: process.env.CLIENT_SECRET,
    port: Number(process.env.PORT ?? 8080),
  })
  console.log(`example client at ${example.url}`)
}
