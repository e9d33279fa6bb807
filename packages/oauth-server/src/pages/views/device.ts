/** The device verification pages (RFC 8628 3.3): enter the user code, then approve or deny. */
import { SCOPE_DESCRIPTIONS, type Scope } from '../../domain/scopes.ts'
import { html, type SafeHtml } from '../html.ts'
import { csrfField } from '../layout.ts'

export function deviceCodePage(options: {
  csrf: string
  userCode: string
  error?: string | undefined
  notice?: string | undefined
}): SafeHtml {
  return html`<h1>Connect a device</h1>
${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<form method="post" action="/oauth/device">
${csrfField(options.csrf)}
<label for="user_code">The code your device shows</label>
<input type="text" id="user_code" name="user_code" value="${options.userCode}" autocomplete="off" autocapitalize="characters" spellcheck="false" aria-describedby="user_code_hint" required autofocus>
<span class="hint" id="user_code_hint">Eight letters, such as BCDF-GHJK.</span>
<button type="submit">Continue</button>
</form>`
}

export function deviceConsentPage(options: {
  csrf: string
  userCode: string
  applicationName: string
  /** The user who registered the application; null for the instance's own. */
  applicationOwner: string | null
  /** a client that registered itself (RFC 7591): no user, and not the instance's own either */
  registeredItself: boolean
  scopes: string[]
  username: string
}): SafeHtml {
  return html`<h1>Authorize ${options.applicationName}?</h1>
<p class="registrant">${
    options.registeredItself
      ? html`An application that registered itself, not one of this instance's own.`
      : options.applicationOwner === null
        ? html`An application of this instance.`
        : html`An application registered by the user <strong>${options.applicationOwner}</strong>, not by this instance.`
  }</p>
<p>A device using ${options.applicationName} asks to use your account <strong>${options.username}</strong>.
Go on only if you started this on a device of yours and it shows the code <strong>${options.userCode}</strong>.</p>
<p>It will be able to:</p>
<ul class="scopes">
${options.scopes.map((s) => html`<li><strong>${s}</strong>: ${SCOPE_DESCRIPTIONS[s as Scope] ?? ''}</li>`)}
</ul>
<form method="post" action="/oauth/device">
${csrfField(options.csrf)}
<input type="hidden" name="user_code" value="${options.userCode}">
<div class="actions">
<button type="submit" name="decision" value="approve">Authorize</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`
}
