import { FAVICON_PATH } from '@campus/shared'
import type { FastifyReply } from 'fastify'
import { html, type SafeHtml } from './html.ts'

export const STYLESHEET_PATH = '/assets/oauth.css'
export const SCRIPT_PATH = '/assets/copy.js'
/** @simplewebauthn/browser's bundle, served from this server, and the pages' passkey ceremonies */
export const WEBAUTHN_PATH = '/assets/webauthn.js'
export const PASSKEYS_PATH = '/assets/passkeys.js'

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

/** `nav`: the signed-in header (account pages); `wide`: room for tables. */
export interface LayoutOptions {
  nav?: SafeHtml
  wide?: boolean
  script?: boolean
  /** the passkey ceremonies' scripts too (WebAuthn needs script; nothing else on the page does) */
  passkeys?: boolean
}

const SCRIPT_CSP = `${PAGE_HEADERS['content-security-policy']}; script-src 'self'`
/** The passkey pages also fetch a ceremony's options from this origin, and from nowhere else. */
const PASSKEYS_CSP = `${SCRIPT_CSP}; connect-src 'self'`

export function layout(title: string, body: SafeHtml, options: LayoutOptions = {}): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
<link rel="stylesheet" href="${STYLESHEET_PATH}">
${options.script ? html`<script src="${SCRIPT_PATH}" defer></script>` : ''}
${options.passkeys ? html`<script src="${WEBAUTHN_PATH}" defer></script><script src="${PASSKEYS_PATH}" defer></script>` : ''}
</head>
<body>
${options.nav ?? ''}
<main${options.wide ? html` class="wide"` : ''}>
${body}
</main>
</body>
</html>
`.value
}

export function sendPage(
  reply: FastifyReply,
  statusCode: number,
  title: string,
  body: SafeHtml,
  options: LayoutOptions = {},
): FastifyReply {
  reply.code(statusCode).headers(PAGE_HEADERS)
  // only pages that load the script file may run script, and only from this origin
  if (options.passkeys) reply.header('content-security-policy', PASSKEYS_CSP)
  else if (options.script) reply.header('content-security-policy', SCRIPT_CSP)
  return reply.send(layout(title, body, options))
}

export function sendErrorPage(reply: FastifyReply, statusCode: number, title: string, message: string): FastifyReply {
  return sendPage(reply, statusCode, title, html`<h1>${title}</h1><p class="error">${message}</p>`)
}

export const STYLESHEET = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1f2328}
main{max-width:28rem;margin:4rem auto;padding:2rem;background:#fff;border:1px solid #d0d7de;border-radius:8px}
main.wide{max-width:52rem;margin-top:2rem}
h1{font-size:1.4rem;margin-top:0}
h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d0d7de;padding-bottom:.25rem}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
label.check{display:flex;gap:.5rem;align-items:baseline;font-weight:400;margin:.35rem 0}
label.check input{margin:0}
.hint{display:block;color:#59636e;font-size:.9rem}
fieldset{border:1px solid #d0d7de;border-radius:6px;margin:1rem 0 0;padding:.5rem 1rem}
legend{font-weight:600;padding:0 .25rem}
input[type=text],input[type=password],input[type=email],input[type=date],textarea{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #d0d7de;border-radius:6px;font:inherit}
textarea{min-height:5rem;font-family:ui-monospace,monospace;font-size:.9rem}
input[aria-invalid=true],textarea[aria-invalid=true]{border-color:#cf222e}
button,a.button{display:inline-block;margin-top:1rem;padding:.5rem 1rem;border-radius:6px;border:1px solid #1f6feb;background:#1f6feb;color:#fff;font:inherit;cursor:pointer;text-decoration:none}
button.secondary,a.button.secondary{background:#fff;color:#1f2328;border-color:#d0d7de}
button.danger{background:#cf222e;border-color:#cf222e}
button.small{margin:0;padding:.2rem .6rem;font-size:.9rem}
:focus-visible{outline:3px solid #0969da;outline-offset:2px}
.error{color:#cf222e}
.errors{border:1px solid #cf222e;background:#ffebe9;border-radius:6px;padding:.5rem 1rem}
.notice{border:1px solid #1a7f37;background:#dafbe1;border-radius:6px;padding:.5rem 1rem}
.once{border:1px solid #bf8700;background:#fff8c5;border-radius:6px;padding:.75rem 1rem;margin:1rem 0}
.once code{word-break:break-all}
ul.scopes li{margin:.4rem 0}
ul.codes{columns:2;font-family:ui-monospace,monospace;list-style:none;padding:0}
.actions{display:flex;gap:.5rem;flex-wrap:wrap;align-items:center}
.actions form{margin:0}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid #d0d7de;vertical-align:top}
th{font-size:.9rem;color:#59636e}
td form{display:inline}
code{font-family:ui-monospace,monospace;font-size:.9rem;background:#f6f8fa;padding:.1rem .3rem;border-radius:4px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.4rem 1rem}
dt{font-weight:600}
dd{margin:0}
.qr svg{width:12rem;height:12rem;display:block;margin:.5rem 0}
header.top{background:#24292f;color:#fff}
header.top nav{max-width:52rem;margin:0 auto;padding:.5rem 1rem;display:flex;gap:1rem;align-items:center;flex-wrap:wrap}
header.top a{color:#fff}
header.top .who{margin-left:auto}
header.top form{margin:0}
header.top button{margin:0;padding:.25rem .75rem;background:transparent;border-color:#8c959f}
.empty{color:#59636e}
`

/** Progressive enhancement: "Copy" buttons stay hidden without JavaScript (the value is shown anyway). */
export const SCRIPT = `
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false
  button.addEventListener('click', () => {
    const source = document.getElementById(button.dataset.copy)
    navigator.clipboard.writeText(source.innerText.trim()).then(() => { button.textContent = 'Copied' })
  })
}
`

/**
 * The passkey forms (`passkeyForm`): shown only where WebAuthn and the library's bundle are there;
 * on submit, the options are fetched with the form's CSRF token, the ceremony runs, and the form is
 * posted with its answer. A refusal of the browser is shown in the form, nothing is posted.
 */
export const PASSKEYS_SCRIPT = `
for (const form of document.querySelectorAll('form[data-passkey]')) {
  if (!window.PublicKeyCredential || !window.SimpleWebAuthnBrowser) continue
  form.hidden = false
  const error = form.querySelector('[data-passkey-error]')
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    error.hidden = true
    try {
      const options = await fetch(form.dataset.options, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf_token: form.elements.csrf_token.value }),
      })
      if (!options.ok) throw new Error('The server did not start the passkey ceremony (' + options.status + ').')
      const optionsJSON = await options.json()
      const answer = form.dataset.passkey === 'register'
        ? await SimpleWebAuthnBrowser.startRegistration({ optionsJSON })
        : await SimpleWebAuthnBrowser.startAuthentication({ optionsJSON })
      form.elements.webauthn_response.value = JSON.stringify(answer)
      form.submit()
    } catch (failure) {
      error.textContent = failure.message || String(failure)
      error.hidden = false
    }
  })
}
`

/** The session's CSRF token, carried by every form. */
export const csrfField = (token: string): SafeHtml => html`<input type="hidden" name="csrf_token" value="${token}">`
