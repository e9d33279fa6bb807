/** /profile/personal_access_tokens: create (value shown once), list, revoke. */
import type { PersonalAccessToken } from '../../db/schema.ts'
import { errorList, notice } from '../account.ts'
import { html, type SafeHtml } from '../html.ts'
import { csrfField } from '../layout.ts'
import { scopeCheckboxes } from './applications.ts'

export interface TokenForm {
  name: string
  scopes: string[]
  expiresAt: string
}

const day = (value: Date | null) => (value ? value.toISOString().slice(0, 10) : 'Never')

function state(t: PersonalAccessToken & { expired: boolean }): string {
  if (t.revoked_at) return 'Revoked'
  return t.expired ? 'Expired' : 'Active'
}

export function personalAccessTokensPage(input: {
  csrf: string
  tokens: Array<PersonalAccessToken & { expired: boolean }>
  form: TokenForm
  errors: string[]
  invalid: Set<string>
  created?: string | undefined
  notice?: string | undefined
}): SafeHtml {
  return html`<h1>Personal access tokens</h1>
<p>A personal access token acts as you on <code>/api/v4</code> (header <code>PRIVATE-TOKEN</code> or <code>Authorization: Bearer</code>), within its scopes.</p>
${notice(input.notice)}
${
  input.created
    ? html`<div class="once" role="status"><p><strong>Your new personal access token.</strong> Copy it now: it is shown only this once.</p>
<p><code id="token">${input.created}</code> <button type="button" class="small secondary" data-copy="token" hidden>Copy</button></p></div>`
    : ''
}
<h2>Add a personal access token</h2>
<form method="post" action="/profile/personal_access_tokens" novalidate>
${csrfField(input.csrf)}
${errorList(input.errors)}
<label for="name">Token name</label>
<input type="text" id="name" name="name" value="${input.form.name}" required${input.invalid.has('name') ? html` aria-invalid="true"` : ''}>
<label for="expires_at">Expiration date</label>
<input type="date" id="expires_at" name="expires_at" value="${input.form.expiresAt}" aria-describedby="expires_hint"${input.invalid.has('expires_at') ? html` aria-invalid="true"` : ''}>
<span class="hint" id="expires_hint">Optional; the token stops working on that day (UTC).</span>
${scopeCheckboxes(input.form.scopes)}
<button type="submit">Create personal access token</button>
</form>
<h2>Your tokens</h2>
${
  input.tokens.length
    ? html`<table><thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col"><span class="hint">Action</span></th></tr></thead><tbody>
${input.tokens.map(
  (
    t,
  ) => html`<tr><td>${t.name}</td><td>${t.scopes.join(' ')}</td><td>${day(t.created_at)}</td><td>${t.last_used_at ? day(t.last_used_at) : 'Never'}</td><td>${day(t.expires_at)}</td><td>${state(t)}</td>
<td>${
    t.revoked_at || t.expired
      ? ''
      : html`<form method="post" action="/profile/personal_access_tokens/${t.id}/revoke">${csrfField(input.csrf)}<button type="submit" class="small danger" aria-label="Revoke ${t.name}">Revoke</button></form>`
  }</td></tr>`,
)}
</tbody></table>`
    : html`<p class="empty">You have no personal access tokens.</p>`
}`
}
