/** Sign-in pages: password, then TOTP when the account has two-factor authentication. */
import Type from 'typebox'
import { signInPage, twoFactorPage } from '../authorization/pages.ts'
import type { ServerContext } from '../context.ts'
import type { User } from '../db/schema.ts'
import { looksLikeRecoveryCode, recoveryCodeDigest } from '../domain/recovery-codes.ts'
import { OTP_PURPOSE, openSecret } from '../domain/secret-box.ts'
import { verifyTotp } from '../domain/totp.ts'
import { sendErrorPage, sendPage } from '../pages/layout.ts'
import { csrfToken, endSession, ensureSession, loadSession, startSession, validCsrf } from '../pages/session.ts'
import { verifyPassword } from '../passwords.ts'
import { useRecoveryCode } from '../repositories/recovery-codes.ts'
import { claimOtpStep, findUserById, findUserByLogin, recordSignIn } from '../repositories/users.ts'
import { throttleAccount } from '../throttle.ts'
import { field, HtmlPage, Redirect, safeReturnTo } from './pages-schema.ts'
import type { OAuthApp } from './types.ts'

const MESSAGES: Record<string, string> = {
  invalid: 'Invalid username or password.',
  locked: 'This account is locked.',
  otp: 'Invalid two-factor code.',
}

const ReturnQuery = Type.Object({
  return_to: Type.Optional(Type.String({ description: 'Local page to continue with (the authorization request)' })),
  error: Type.Optional(Type.String({ description: 'Why the previous attempt failed' })),
})

const FORBIDDEN = 'The form expired or did not come from this site. Reload the page and try again.'

export function signInRoutes(app: OAuthApp, context: ServerContext): void {
  const { db, throttle } = context
  const withReturn = (path: string, returnTo: string, error?: string) =>
    `${path}?return_to=${encodeURIComponent(returnTo)}${error ? `&error=${error}` : ''}`

  /** A TOTP code (each time step once), or an unused recovery code (each once). */
  async function secondFactorAccepted(user: User, sealedSeed: string, attempt: string): Promise<boolean> {
    if (looksLikeRecoveryCode(attempt)) return useRecoveryCode(db, user.id, recoveryCodeDigest(attempt))
    const seed = openSecret(context.settings.secretKey, sealedSeed, OTP_PURPOSE)
    const step = verifyTotp(seed, attempt, user.otp_last_step)
    return step !== undefined && (await claimOtpStep(db, user.id, step))
  }

  app.get(
    '/users/sign_in',
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: 'Sign-in page',
        querystring: ReturnQuery,
        response: { 200: HtmlPage('Form') },
      },
    },
    async (request, reply) => {
      const session = await ensureSession(request, reply, context)
      const query = request.query as Record<string, unknown>
      return sendPage(
        reply,
        200,
        'Sign in',
        signInPage({
          csrf: csrfToken(session),
          returnTo: safeReturnTo(field(query, 'return_to')),
          error: MESSAGES[field(query, 'error') ?? ''],
          signupEnabled: context.settings.signupEnabled,
        }),
      )
    },
  )

  app.post(
    '/users/sign_in',
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: 'Sign in with username and password',
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object({
          username: Type.String(),
          password: Type.String(),
          csrf_token: Type.String(),
          return_to: Type.Optional(Type.String()),
        }),
        response: {
          303: Redirect('On to the second factor, back to return_to, or back to the form with an error'),
          403: HtmlPage('Missing or wrong CSRF token'),
          429: HtmlPage('Too many failed attempts (Retry-After)'),
        },
      },
    },
    async (request, reply) => {
      const session = await loadSession(request, context)
      if (!validCsrf(session, field(request.body, 'csrf_token'))) {
        return sendErrorPage(reply, 403, 'Request refused', FORBIDDEN)
      }
      const returnTo = safeReturnTo(field(request.body, 'return_to'))
      const username = field(request.body, 'username') ?? ''
      const password = field(request.body, 'password') ?? ''
      const user = username ? await findUserByLogin(db, username) : undefined
      const account = throttleAccount(user, username)
      const wait = await throttle.blocked(account, request.ip)
      if (wait !== undefined) {
        reply.header('retry-after', String(wait))
        return sendErrorPage(
          reply,
          429,
          'Too many attempts',
          `Too many failed sign-in attempts. Try again in ${wait} seconds.`,
        )
      }
      if (!(await verifyPassword(user?.password_hash, password)) || !user) {
        await throttle.failed(account, request.ip)
        return reply.redirect(withReturn('/users/sign_in', returnTo, 'invalid'), 303)
      }
      if (user.locked) return reply.redirect(withReturn('/users/sign_in', returnTo, 'locked'), 303)
      if (user.otp_secret) {
        // the counter is cleared once the second factor passes too, not by the password alone:
        // entering the right password again must not buy more guesses at the code
        await startSession(reply, context, session, { pendingUserId: user.id })
        return reply.redirect(withReturn('/users/two_factor', returnTo), 303)
      }
      await throttle.succeeded(account)
      await startSession(reply, context, session, { userId: user.id })
      await recordSignIn(db, user.id)
      return reply.redirect(returnTo, 303)
    },
  )

  app.get(
    '/users/two_factor',
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: 'Second-factor page',
        querystring: ReturnQuery,
        response: { 200: HtmlPage('Form'), 302: Redirect('No password step yet: to the sign-in page') },
      },
    },
    async (request, reply) => {
      const session = await loadSession(request, context)
      const query = request.query as Record<string, unknown>
      const returnTo = safeReturnTo(field(query, 'return_to'))
      if (!session?.row.pending_user_id) return reply.redirect(withReturn('/users/sign_in', returnTo), 302)
      return sendPage(
        reply,
        200,
        'Two-factor authentication',
        twoFactorPage({ csrf: csrfToken(session), returnTo, error: MESSAGES[field(query, 'error') ?? ''] }),
      )
    },
  )

  app.post(
    '/users/two_factor',
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: 'Verify the TOTP code (RFC 6238)',
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object({
          otp_attempt: Type.String(),
          csrf_token: Type.String(),
          return_to: Type.Optional(Type.String()),
        }),
        response: {
          303: Redirect('Back to return_to, or back to the form with an error'),
          403: HtmlPage('Missing or wrong CSRF token'),
          429: HtmlPage('Too many failed attempts (Retry-After)'),
        },
      },
    },
    async (request, reply) => {
      const session = await loadSession(request, context)
      if (!validCsrf(session, field(request.body, 'csrf_token'))) {
        return sendErrorPage(reply, 403, 'Request refused', FORBIDDEN)
      }
      const returnTo = safeReturnTo(field(request.body, 'return_to'))
      const user = session.row.pending_user_id ? await findUserById(db, session.row.pending_user_id) : undefined
      if (!user?.otp_secret) return reply.redirect(withReturn('/users/sign_in', returnTo), 303)
      const account = throttleAccount(user, user.username)
      const wait = await throttle.blocked(account, request.ip)
      if (wait !== undefined) {
        reply.header('retry-after', String(wait))
        return sendErrorPage(reply, 429, 'Too many attempts', `Too many failed attempts. Try again in ${wait} seconds.`)
      }
      const attempt = (field(request.body, 'otp_attempt') ?? '').trim()
      if (!(await secondFactorAccepted(user, user.otp_secret, attempt))) {
        await throttle.failed(account, request.ip)
        return reply.redirect(withReturn('/users/two_factor', returnTo, 'otp'), 303)
      }
      await throttle.succeeded(account)
      await startSession(reply, context, session, { userId: user.id })
      await recordSignIn(db, user.id)
      return reply.redirect(returnTo, 303)
    },
  )

  app.post(
    '/users/sign_out',
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: 'Sign out',
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object({ csrf_token: Type.String() }),
        response: { 303: Redirect('To the sign-in page'), 403: HtmlPage('Missing or wrong CSRF token') },
      },
    },
    async (request, reply) => {
      const session = await loadSession(request, context)
      if (!validCsrf(session, field(request.body, 'csrf_token'))) {
        return sendErrorPage(reply, 403, 'Request refused', FORBIDDEN)
      }
      await endSession(reply, context, session)
      return reply.redirect('/users/sign_in', 303)
    },
  )
}
