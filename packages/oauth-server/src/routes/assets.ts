/** The pages' stylesheet and scripts (no third-party assets: the WebAuthn helper is served from here). */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { routePlugin } from '../oauth-app.ts'
import {
  PASSKEYS_PATH,
  PASSKEYS_SCRIPT,
  SCRIPT,
  SCRIPT_PATH,
  STYLESHEET,
  STYLESHEET_PATH,
  WEBAUTHN_PATH,
} from '../pages/layout.ts'

/** @simplewebauthn/browser's own bundle (it defines `SimpleWebAuthnBrowser`), read once. */
const WEBAUTHN_BUNDLE = readFileSync(
  join(
    dirname(createRequire(import.meta.url).resolve('@simplewebauthn/browser')),
    '..',
    'dist',
    'bundle',
    'index.umd.min.js',
  ),
  'utf8',
)

export const assetRoutes = routePlugin('oauth-asset-routes', (app) => {
  app.get(STYLESHEET_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('content-type', 'text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(STYLESHEET),
  )
  for (const [path, body] of [
    [SCRIPT_PATH, SCRIPT],
    [WEBAUTHN_PATH, WEBAUTHN_BUNDLE],
    [PASSKEYS_PATH, PASSKEYS_SCRIPT],
  ] as const) {
    app.get(path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .header('content-type', 'text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .header('x-content-type-options', 'nosniff')
        .send(body),
    )
  }
})
