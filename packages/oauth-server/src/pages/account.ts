/** The signed-in account of a page request, and the frame of every account page. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { User } from '../db/schema.ts'
import type { OAuthServices } from '../oauth-app.ts'
import { findUserById } from '../repositories/users.ts'
import { html, type SafeHtml } from './html.ts'
import { csrfField, sendPage } from './layout.ts'
import { csrfToken, loadSession, type Session } from './session.ts'

export interface Account {
  user: User
  session: Session
  csrf: string
}

/** The session's user, unless signed out, half signed in or locked. */
export async function currentAccount(
  request: FastifyRequest,
  context: Pick<OAuthServices, 'db' | 'settings'>,
): Promise<Account | undefined> {
  const session = await loadSession(request, context)
  if (!session?.row.user_id) return undefined
  const user = await findUserById(context.db, session.row.user_id)
  if (!user || user.locked) return undefined
  return { user, session, csrf: csrfToken(session) }
}

function navigation(account: Account): SafeHtml {
  return html`<header class="top"><nav aria-label="Account">
<a href="/profile/applications">Applications</a>
<a href="/profile/personal_access_tokens">Access tokens</a>
<a href="/profile/two_factor_auth">Two-factor authentication</a>
${account.user.admin ? html`<a href="/admin/users">Admin</a>` : ''}
<span class="who">Signed in as <strong>${account.user.username}</strong></span>
<form method="post" action="/users/sign_out">${csrfField(account.csrf)}<button type="submit">Sign out</button></form>
</nav></header>`
}

export function sendAccountPage(
  reply: FastifyReply,
  account: Account,
  title: string,
  body: SafeHtml,
  options: { status?: number; script?: boolean; passkeys?: boolean } = {},
): FastifyReply {
  return sendPage(reply, options.status ?? 200, title, body, {
    nav: navigation(account),
    wide: true,
    script: options.script ?? false,
    passkeys: options.passkeys ?? false,
  })
}

export const notice = (text: string | undefined) => (text ? html`<p class="notice" role="status">${text}</p>` : html``)

export function errorList(errors: string[]): SafeHtml {
  if (errors.length === 0) return html``
  return html`<div class="errors" role="alert"><p><strong>The form could not be saved:</strong></p><ul>${errors.map((e) => html`<li>${e}</li>`)}</ul></div>`
}
