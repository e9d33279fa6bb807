/** /profile/two_factor_auth: enrol with a QR code or the manual key, recovery codes, disable. */

import type { Passkey } from '../../repositories/passkeys.ts'
import { errorList, notice } from '../account.ts'
import { html, raw, type SafeHtml } from '../html.ts'
import { csrfField } from '../layout.ts'
import { passkeyForm } from './sign-in.ts'

export function enrolPage(input: {
  csrf: string
  qrSvg: string
  secret: string
  otpauthUri: string
  errors: string[]
}): SafeHtml {
  return html`<h1>Two-factor authentication</h1>
<p>Two-factor authentication is <strong>off</strong>. Turn it on to ask for a code from your authenticator app after your password.</p>
<h2>1. Scan the QR code</h2>
<div class="qr" role="img" aria-label="QR code of your two-factor key">${raw(input.qrSvg)}</div>
<p>On this device: <a href="${input.otpauthUri}">open the key in your authenticator app</a>.</p>
<p>Or enter this key by hand (time-based, 6 digits, 30 seconds):</p>
<p><code id="otp-secret">${input.secret.replace(/(.{4})/g, '$1 ').trim()}</code> <button type="button" class="small secondary" data-copy="otp-secret" hidden>Copy</button></p>
<h2>2. Confirm with a code</h2>
<form method="post" action="/profile/two_factor_auth" novalidate>
${csrfField(input.csrf)}
${errorList(input.errors)}
<label for="otp_code">Code from your authenticator app</label>
<input type="text" id="otp_code" name="otp_code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required${input.errors.length ? html` aria-invalid="true"` : ''}>
<button type="submit">Enable two-factor authentication</button>
</form>`
}

export function enabledPage(input: {
  csrf: string
  codes?: string[] | undefined
  unusedCodes: number
  errors: string[]
  notice?: string | undefined
  passkeys: readonly Passkey[]
}): SafeHtml {
  return html`<h1>Two-factor authentication</h1>
${notice(input.notice)}
${
  input.codes
    ? html`<div class="once" role="status"><p><strong>Your recovery codes.</strong> Each one signs you in once if you lose your device. Store them somewhere safe now: they are shown only this once.</p>
<ul class="codes" id="recovery-codes">${input.codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
<button type="button" class="small secondary" data-copy="recovery-codes" hidden>Copy codes</button></div>`
    : ''
}
<p>Two-factor authentication is <strong>on</strong>. You have ${input.unusedCodes} unused recovery ${input.unusedCodes === 1 ? 'code' : 'codes'}.</p>
<h2>Passkeys</h2>
<p>A passkey signs you in as a second factor instead of a code, or on its own, without your password (your device asks for its PIN or your fingerprint).</p>
${
  input.passkeys.length
    ? html`<table><thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="hint">Remove (current password)</span></th></tr></thead><tbody>
${input.passkeys.map(
  (
    p,
  ) => html`<tr><td>${p.name}</td><td>${p.created_at.toISOString().slice(0, 10)}</td><td>${p.last_used_at ? p.last_used_at.toISOString().slice(0, 10) : 'Never'}</td>
<td><form method="post" action="/profile/two_factor_auth/passkeys/${p.id}/delete">${csrfField(input.csrf)}<label for="remove_password_${p.id}" class="hint">Current password</label><input type="password" id="remove_password_${p.id}" name="current_password" autocomplete="current-password" required><button type="submit" class="small danger" aria-label="Remove the passkey ${p.name}">Remove</button></form></td></tr>`,
)}
</tbody></table>`
    : html`<p>No passkey yet.</p>`
}
${passkeyForm({ action: '/profile/two_factor_auth/passkeys', options: '/profile/two_factor_auth/passkeys/options', csrf: input.csrf, label: 'Add a passkey', name: true })}
<noscript><p class="hint">Adding or using a passkey needs JavaScript; codes and recovery codes work without it.</p></noscript>
<h2>Disable two-factor authentication</h2>
<p class="hint">Disabling it removes your passkeys too.</p>
<form method="post" action="/profile/two_factor_auth/disable" novalidate>
${csrfField(input.csrf)}
${errorList(input.errors)}
<label for="current_password">Current password</label>
<input type="password" id="current_password" name="current_password" autocomplete="current-password" required${input.errors.length ? html` aria-invalid="true"` : ''}>
<button type="submit" class="danger">Disable two-factor authentication</button>
</form>`
}
