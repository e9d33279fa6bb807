/** /profile/applications: the user's applications and the applications they authorized. */
import type { Application } from '../../db/schema.ts'
import { DEVICE_CODE_GRANT, grantEnabled, ropcEnabled } from '../../domain/grant-types.ts'
import { SCOPE_DESCRIPTIONS, SCOPES } from '../../domain/scopes.ts'
import type { AuthorizedApplication } from '../../repositories/consents.ts'
import type { AnonymousToken } from '../../repositories/tokens.ts'
import { errorList, notice } from '../account.ts'
import { html, type SafeHtml } from '../html.ts'
import { csrfField } from '../layout.ts'

export interface ApplicationForm {
  name: string
  redirectUris: string
  confidential: boolean
  scopes: string[]
  /** GitLab's ropc_enabled */
  passwordGrant: boolean
  /** RFC 6749 4.4, confidential applications only */
  clientCredentials: boolean
  /** RFC 8628: the device authorization grant */
  deviceGrant: boolean
}

export const EMPTY_FORM: ApplicationForm = {
  name: '',
  redirectUris: '',
  confidential: true,
  scopes: [],
  // legacy and off for a new application, as its hint says (the security baseline over GitLab's default)
  passwordGrant: false,
  clientCredentials: false,
  deviceGrant: false,
}

const date = (value: Date) => value.toISOString().slice(0, 16).replace('T', ' ')

export function scopeCheckboxes(selected: readonly string[], legend = 'Scopes'): SafeHtml {
  return html`<fieldset><legend>${legend}</legend>
${SCOPES.map(
  (
    s,
  ) => html`<label class="check"><input type="checkbox" name="scopes" value="${s}"${selected.includes(s) ? html` checked` : ''}>
<span><code>${s}</code><span class="hint">${SCOPE_DESCRIPTIONS[s]}</span></span></label>`,
)}
</fieldset>`
}

export function applicationFormFields(form: ApplicationForm, errors: string[], invalid: Set<string>): SafeHtml {
  return html`${errorList(errors)}
<label for="name">Name</label>
<input type="text" id="name" name="name" value="${form.name}" required${invalid.has('name') ? html` aria-invalid="true"` : ''}>
<label for="redirect_uris">Redirect URIs</label>
<textarea id="redirect_uris" name="redirect_uris" aria-describedby="redirect_uris_hint" required${invalid.has('redirect_uris') ? html` aria-invalid="true"` : ''}>${form.redirectUris}</textarea>
<span class="hint" id="redirect_uris_hint">One per line. https, or http only on loopback (127.0.0.1, [::1], localhost).</span>
<label class="check"><input type="checkbox" name="confidential" value="1"${form.confidential ? html` checked` : ''}>
<span>Confidential<span class="hint">The application can keep a secret (a server). Leave unchecked for mobile and single-page apps, which must use PKCE.</span></span></label>
<input type="hidden" name="password_grant" value="0">
<label class="check"><input type="checkbox" name="password_grant" value="1"${form.passwordGrant ? html` checked` : ''}>
<span>Password grant (ROPC)<span class="hint">Let the application exchange a user's username and password for a token. Legacy: the application sees the password; leave unchecked unless it is your own trusted client.</span></span></label>
<input type="hidden" name="client_credentials" value="0">
<label class="check"><input type="checkbox" name="client_credentials" value="1"${form.clientCredentials ? html` checked` : ''}${invalid.has('client_credentials') ? html` aria-invalid="true"` : ''}>
<span>Client credentials<span class="hint">Let the application get tokens of its own, with no user, from its ID and secret (a script or a data logger). Confidential applications only; you see and revoke its tokens on its page.</span></span></label>
<input type="hidden" name="device_grant" value="0">
<label class="check"><input type="checkbox" name="device_grant" value="1"${form.deviceGrant ? html` checked` : ''}>
<span>Device authorization<span class="hint">Let a device without a browser, such as a command-line tool, sign a user in: it shows a code the user enters at /oauth/device.</span></span></label>
${scopeCheckboxes(form.scopes)}`
}

export function applicationsPage(input: {
  csrf: string
  applications: Application[]
  authorized: AuthorizedApplication[]
  /** access tokens of password grants made without a client */
  anonymous: AnonymousToken[]
  form: ApplicationForm
  errors: string[]
  invalid: Set<string>
  notice?: string | undefined
}): SafeHtml {
  return html`<h1>Applications</h1>
${notice(input.notice)}
<h2>Your applications</h2>
${
  input.applications.length
    ? html`<table><thead><tr><th scope="col">Name</th><th scope="col">Callback URLs</th><th scope="col">Confidential</th><th scope="col">Scopes</th></tr></thead><tbody>
${input.applications.map(
  (a) => html`<tr><td><a href="/profile/applications/${a.id}">${a.name}</a></td>
<td>${a.redirect_uris.map((u) => html`<code>${u}</code><br>`)}</td>
<td>${a.confidential ? 'Yes' : 'No'}</td><td>${a.scopes.join(' ')}</td></tr>`,
)}
</tbody></table>`
    : html`<p class="empty">You have no applications yet.</p>`
}
<h2 id="new">Add new application</h2>
<form method="post" action="/profile/applications" novalidate>
${csrfField(input.csrf)}
${applicationFormFields(input.form, input.errors, input.invalid)}
<button type="submit">Save application</button>
</form>
<h2 id="authorized">Authorized applications</h2>
${
  input.authorized.length || input.anonymous.length
    ? html`<table><thead><tr><th scope="col">Name</th><th scope="col">Authorized</th><th scope="col">Scopes</th><th scope="col"><span class="hint">Action</span></th></tr></thead><tbody>
${input.authorized.map(
  (
    a,
  ) => html`<tr><td>${a.name}</td><td><time datetime="${a.created_at.toISOString()}">${date(a.created_at)}</time> UTC</td><td>${a.scopes.join(' ')}</td>
<td><form method="post" action="/profile/applications/authorized/${a.application_id}/revoke">${csrfField(input.csrf)}<button type="submit" class="small danger" aria-label="Revoke ${a.name}">Revoke</button></form></td></tr>`,
)}
${input.anonymous.map(
  (
    t,
  ) => html`<tr><td>Anonymous<span class="hint">Authorization was granted by entering your username and password in the application.</span></td><td><time datetime="${t.created_at.toISOString()}">${date(t.created_at)}</time> UTC</td><td>${t.scopes.join(' ')}</td>
<td><form method="post" action="/profile/applications/authorized/tokens/${t.id}/revoke">${csrfField(input.csrf)}<button type="submit" class="small danger" aria-label="Revoke the anonymous token of ${date(t.created_at)}">Revoke</button></form></td></tr>`,
)}
</tbody></table>`
    : html`<p class="empty">You have not authorized any application.</p>`
}`
}

export function applicationPage(input: {
  csrf: string
  application: Application
  /** the application's own tokens (client credentials) */
  tokens: AnonymousToken[]
  secret?: string | undefined
  notice?: string | undefined
}): SafeHtml {
  const a = input.application
  return html`<h1>Application: ${a.name}</h1>
${notice(input.notice)}
${
  input.secret
    ? html`<div class="once" role="status"><p><strong>Copy the secret now.</strong> It is shown only this once; only its digest is kept.</p>
<p><code id="secret">${input.secret}</code> <button type="button" class="small secondary" data-copy="secret" hidden>Copy</button></p></div>`
    : ''
}
<dl>
<dt>Application ID</dt><dd><code id="uid">${a.uid}</code> <button type="button" class="small secondary" data-copy="uid" hidden>Copy</button></dd>
<dt>Secret</dt><dd>${a.confidential ? (input.secret ? 'shown above, this once' : 'hidden (renew it to get a new one)') : 'none: public client (PKCE)'}</dd>
<dt>Callback URLs</dt><dd>${a.redirect_uris.map((u) => html`<code>${u}</code><br>`)}</dd>
<dt>Confidential</dt><dd>${a.confidential ? 'Yes' : 'No'}</dd>
<dt>Password grant (ROPC)</dt><dd>${ropcEnabled(a) ? 'Allowed' : 'Not allowed'}</dd>
<dt>Client credentials</dt><dd>${grantEnabled(a, 'client_credentials') ? 'Allowed' : 'Not allowed'}</dd>
<dt>Device authorization</dt><dd>${grantEnabled(a, DEVICE_CODE_GRANT) ? 'Allowed' : 'Not allowed'}</dd>
<dt>Scopes</dt><dd>${a.scopes.map((s) => html`<code>${s}</code> `)}</dd>
</dl>
${applicationTokens(input.csrf, a, input.tokens)}
<div class="actions">
${
  a.confidential
    ? html`<form method="post" action="/profile/applications/${a.id}/renew">${csrfField(input.csrf)}<button type="submit" class="secondary">Renew secret</button></form>`
    : ''
}
<a class="button secondary" href="/profile/applications/${a.id}/edit">Edit</a>
<a class="button secondary" href="/profile/applications/${a.id}/delete">Delete</a>
<a class="button secondary" href="/profile/applications">Back to applications</a>
</div>`
}

/** The application's own live tokens (client credentials), each with Revoke. */
function applicationTokens(csrf: string, a: Application, tokens: AnonymousToken[]): SafeHtml {
  if (!grantEnabled(a, 'client_credentials') && tokens.length === 0) return html``
  return html`<h2>Tokens of the application</h2>
${
  tokens.length
    ? html`<table><thead><tr><th>Created</th><th>Expires</th><th>Scopes</th><th></th></tr></thead><tbody>
${tokens.map(
  (
    t,
  ) => html`<tr><td><time datetime="${t.created_at.toISOString()}">${date(t.created_at)}</time> UTC</td><td><time datetime="${t.expires_at.toISOString()}">${date(t.expires_at)}</time> UTC</td><td>${t.scopes.join(' ')}</td>
<td><form method="post" action="/profile/applications/${a.id}/tokens/${t.id}/revoke">${csrfField(csrf)}<button type="submit" class="small danger" aria-label="Revoke the token of ${date(t.created_at)}">Revoke</button></form></td></tr>`,
)}
</tbody></table>`
    : html`<p class="empty">No live token: the application has not used its client credentials lately.</p>`
}`
}

export function editApplicationPage(input: {
  csrf: string
  application: Application
  form: ApplicationForm
  errors: string[]
  invalid: Set<string>
}): SafeHtml {
  return html`<h1>Edit application</h1>
<form method="post" action="/profile/applications/${input.application.id}" novalidate>
${csrfField(input.csrf)}
${applicationFormFields(input.form, input.errors, input.invalid)}
<div class="actions"><button type="submit">Save changes</button>
<a class="button secondary" href="/profile/applications/${input.application.id}">Cancel</a></div>
</form>`
}

export function deleteApplicationPage(input: { csrf: string; application: Application }): SafeHtml {
  return html`<h1>Delete ${input.application.name}?</h1>
<p>The application, its secret and every token issued to it stop working at once. This cannot be undone.</p>
<form method="post" action="/profile/applications/${input.application.id}/delete">
${csrfField(input.csrf)}
<div class="actions"><button type="submit" class="danger">Delete application</button>
<a class="button secondary" href="/profile/applications/${input.application.id}">Cancel</a></div>
</form>`
}
