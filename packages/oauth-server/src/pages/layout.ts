import type { FastifyReply } from 'fastify'
import { html, type SafeHtml } from './html.ts'

export const STYLESHEET_PATH = '/assets/oauth.css'

/** Headers of every HTML page: no framing, no referrer, no inline script, nothing from elsewhere, no caching. */
export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  pragma: 'no-cache',
}

export function layout(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`.value
}

export function sendPage(reply: FastifyReply, statusCode: number, title: string, body: SafeHtml): FastifyReply {
  return reply.code(statusCode).headers(PAGE_HEADERS).send(layout(title, body))
}

export function sendErrorPage(reply: FastifyReply, statusCode: number, title: string, message: string): FastifyReply {
  return sendPage(reply, statusCode, title, html`<h1>${title}</h1><p class="error">${message}</p>`)
}

export const STYLESHEET = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1f2328}
main{max-width:28rem;margin:4rem auto;padding:2rem;background:#fff;border:1px solid #d0d7de;border-radius:8px}
h1{font-size:1.4rem;margin-top:0}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #d0d7de;border-radius:6px;font:inherit}
button{margin-top:1rem;padding:.5rem 1rem;border-radius:6px;border:1px solid #1f6feb;background:#1f6feb;color:#fff;font:inherit;cursor:pointer}
button.secondary{background:#fff;color:#1f2328;border-color:#d0d7de}
.error{color:#cf222e}
ul.scopes li{margin:.4rem 0}
.actions{display:flex;gap:.5rem}
`
