/** Administrator pages: users (lock, unlock) and applications (trusted flag). */
import type { Application, User } from '../../db/schema.ts'
import { isInstanceWide } from '../../domain/consent.ts'
import { notice } from '../account.ts'
import { html, type SafeHtml } from '../html.ts'
import { csrfField } from '../layout.ts'

const when = (value: Date | null) => (value ? value.toISOString().slice(0, 16).replace('T', ' ') : 'Never')

const adminNav = html`<p class="actions"><a href="/admin/users">Users</a> <a href="/admin/applications">Applications</a></p>`

export function adminUsersPage(input: {
  csrf: string
  users: User[]
  selfId: number
  notice?: string | undefined
}): SafeHtml {
  return html`<h1>Users</h1>
${adminNav}
${notice(input.notice)}
<table><thead><tr><th scope="col">Username</th><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">2FA</th><th scope="col">Last sign-in (UTC)</th><th scope="col">State</th><th scope="col"><span class="hint">Action</span></th></tr></thead><tbody>
${input.users.map(
  (
    u,
  ) => html`<tr><td>${u.username}</td><td>${u.name}</td><td>${u.email ?? ''}</td><td>${u.admin ? 'Admin' : 'User'}</td><td>${u.otp_secret ? 'On' : 'Off'}</td><td>${when(u.current_sign_in_at)}</td><td>${u.locked ? 'Locked' : 'Active'}</td>
<td>${
    u.id === input.selfId
      ? html`<span class="hint">you</span>`
      : html`<form method="post" action="/admin/users/${u.id}/${u.locked ? 'unlock' : 'lock'}">${csrfField(input.csrf)}<button type="submit" class="small${u.locked ? ' secondary' : ' danger'}" aria-label="${u.locked ? 'Unlock' : 'Lock'} ${u.username}">${u.locked ? 'Unlock' : 'Lock'}</button></form>`
  }</td></tr>`,
)}
</tbody></table>`
}

export function adminApplicationsPage(input: {
  csrf: string
  applications: Array<Application & { owner: string | null }>
  notice?: string | undefined
}): SafeHtml {
  return html`<h1>Applications</h1>
${adminNav}
${notice(input.notice)}
<p>A trusted application skips the consent page: its users are not asked before it gets a token. Only instance-wide applications (registered with <code>pnpm oauth app:create</code>) can be trusted; an application a user registered stays under their control.</p>
<table><thead><tr><th scope="col">Name</th><th scope="col">Owner</th><th scope="col">Application ID</th><th scope="col">Confidential</th><th scope="col">Trusted</th><th scope="col"><span class="hint">Action</span></th></tr></thead><tbody>
${input.applications.map(
  (
    a,
  ) => html`<tr><td>${a.name}</td><td>${a.owner ?? (a.registration_token_digest ? 'registered itself' : 'instance')}</td><td><code>${a.uid}</code></td><td>${a.confidential ? 'Yes' : 'No'}</td><td>${a.trusted ? 'Yes' : 'No'}</td>
<td>${
    isInstanceWide(a) || a.trusted
      ? html`<form method="post" action="/admin/applications/${a.id}/${a.trusted ? 'untrust' : 'trust'}">${csrfField(input.csrf)}<button type="submit" class="small secondary" aria-label="${a.trusted ? 'Do not trust' : 'Trust'} ${a.name}">${a.trusted ? 'Mark untrusted' : 'Mark trusted'}</button></form>`
      : html`<span class="hint">${a.owner_id === null ? 'registered itself' : 'owned by a user'}</span>`
  }</td></tr>`,
)}
</tbody></table>`
}
