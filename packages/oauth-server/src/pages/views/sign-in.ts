/** The sign-in, two-factor and consent pages. Every form carries the session's CSRF token. */

import type { AuthorizationRequest } from '../../authorization/request.ts'
import type { Application } from '../../db/schema.ts'
import { SCOPE_DESCRIPTIONS, type Scope } from '../../domain/scopes.ts'
import type { OAuthError } from '../../errors.ts'
import { html, type SafeHtml } from '../html.ts'
import { csrfField } from '../layout.ts'

/** Where a redirect URI leads, as a user can judge it: its origin (or scheme for a native app). */
export function destinationOf(uri: string): string {
  const url = new URL(uri)
  return url.host ? url.origin : `${url.protocol}${url.pathname}`
}

export interface SignUpForm {
  username: string
  email: string
  name: string
}

export function signUpPage(options: { csrf: string; form: SignUpForm; errors: string[] }): SafeHtml {
  const { form } = options
  return html`<h1>Register</h1>
${options.errors.length ? html`<div class="errors" role="alert"><ul>${options.errors.map((e) => html`<li>${e}</li>`)}</ul></div>` : ''}
<form method="post" action="/users/sign_up" novalidate>
${csrfField(options.csrf)}
<label for="name">Full name</label>
<input type="text" id="name" name="name" value="${form.name}" autocomplete="name" required>
<label for="username">Username</label>
<input type="text" id="username" name="username" value="${form.username}" autocomplete="username" required>
<label for="email">Email</label>
<input type="email" id="email" name="email" value="${form.email}" autocomplete="email" required>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="new-password" aria-describedby="password_hint" required>
<span class="hint" id="password_hint">At least 8 characters.</span>
<button type="submit">Register</button>
</form>
<p>Already have an account? <a href="/users/sign_in">Sign in</a></p>`
}

export function signInPage(options: {
  csrf: string
  returnTo: string
  error?: string | undefined
  signupEnabled?: boolean
}): SafeHtml {
  return html`<h1>Sign in</h1>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<form method="post" action="/users/sign_in">
${csrfField(options.csrf)}
<input type="hidden" name="return_to" value="${options.returnTo}">
<label for="username">Username or email</label>
<input type="text" id="username" name="username" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
${passkeyForm({ action: '/users/sign_in/passkey', options: '/users/sign_in/passkey/options', csrf: options.csrf, returnTo: options.returnTo, label: 'Use a passkey instead' })}
${options.signupEnabled ? html`<p>No account yet? <a href="/users/sign_up">Register</a></p>` : ''}`
}

/**
 * A passkey ceremony's form: hidden until the page's script (`/assets/passkeys.js`) shows it, since
 * WebAuthn needs script; the script fetches the options, runs the ceremony and posts its answer in
 * `webauthn_response`. Everything else on the page works without script.
 */
export function passkeyForm(input: {
  action: string
  options: string
  csrf: string
  returnTo?: string
  label: string
  name?: boolean
}): SafeHtml {
  return html`<form method="post" action="${input.action}" data-passkey="${input.name ? 'register' : 'authenticate'}" data-options="${input.options}" hidden>
${csrfField(input.csrf)}
${input.returnTo === undefined ? '' : html`<input type="hidden" name="return_to" value="${input.returnTo}">`}
<input type="hidden" name="webauthn_response" value="">
${
  input.name
    ? html`<label for="passkey_name">Name of the passkey</label>
<input type="text" id="passkey_name" name="name" maxlength="100" required>`
    : ''
}
<p class="error" role="alert" data-passkey-error hidden></p>
<button type="submit" class="secondary">${input.label}</button>
</form>`
}

export function twoFactorPage(options: {
  csrf: string
  returnTo: string
  error?: string | undefined
  passkeys?: boolean
}): SafeHtml {
  return html`<h1>Two-factor authentication</h1>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<form method="post" action="/users/two_factor">
${csrfField(options.csrf)}
<input type="hidden" name="return_to" value="${options.returnTo}">
<label for="otp_attempt">Code from your authenticator app</label>
<input type="text" id="otp_attempt" name="otp_attempt" autocomplete="one-time-code" aria-describedby="otp_hint" required autofocus>
<span class="hint" id="otp_hint">The six digits your app shows, or one of your recovery codes.</span>
<button type="submit">Verify</button>
</form>
${options.passkeys ? passkeyForm({ action: '/users/two_factor', options: '/users/two_factor/passkey/options', csrf: options.csrf, returnTo: options.returnTo, label: 'Use a passkey' }) : ''}`
}

export function consentPage(options: { csrf: string; request: AuthorizationRequest; username: string }): SafeHtml {
  const { request } = options
  // a pushed request is named by its request_uri alone (RFC 9126 4)
  const hidden: Record<string, string | undefined> = request.pushed
    ? { client_id: request.client.uid, request_uri: request.pushed.requestUri }
    : {
        client_id: request.client.uid,
        redirect_uri: request.redirectUri,
        response_type: request.responseType,
        scope: request.scopes.join(' '),
        state: request.state,
        code_challenge: request.codeChallenge,
        code_challenge_method: request.codeChallengeMethod,
        nonce: request.nonce,
        dpop_jkt: request.dpopJkt,
      }
  return html`<h1>Authorize ${request.client.name}?</h1>
<p>${request.client.name} asks to use your account <strong>${options.username}</strong>.</p>
<p>It will be able to:</p>
<ul class="scopes">
${request.scopes.map((s) => html`<li><strong>${s}</strong>: ${SCOPE_DESCRIPTIONS[s as Scope] ?? ''}</li>`)}
</ul>
<p>You will be sent to ${destinationOf(request.redirectUri)}.</p>
<form method="post" action="/oauth/authorize">
${csrfField(options.csrf)}
${Object.entries(hidden).map(([k, v]) => (v === undefined ? '' : html`<input type="hidden" name="${k}" value="${v}">`))}
<div class="actions">
<button type="submit" name="decision" value="approve">Authorize</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`
}

/**
 * An error of an application a user registered (RFC 9700 4.11.2): shown, not redirected, so a
 * crafted request cannot bounce visitors to a site of the registrant's choosing. The user may
 * still go back to the application, seeing where that leads.
 */
export function authorizationErrorPage(options: { client: Application; error: OAuthError; back: string }): SafeHtml {
  return html`<h1>The authorization request is invalid</h1>
<p>The application <strong>${options.client.name}</strong> sent a request this server cannot answer:</p>
<p class="error">${options.error.message} (<code>${options.error.error}</code>)</p>
<p>Nothing was shared with it. You can close this page, or
<a href="${options.back}" rel="noreferrer">return to the application at ${destinationOf(options.back)}</a>.</p>`
}
