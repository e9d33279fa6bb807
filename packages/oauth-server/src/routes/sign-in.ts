/** Sign-in pages: password, then TOTP when the account has two-factor authentication. */
import Type from 'typebox'
import { checkPassword, checkSecondFactor, completeSignIn } from '../credentials.ts'
import { routePlugin } from '../oauth-app.ts'
import { field, refuseForm, safeReturnTo, tooManyAttempts, tooManyRequests } from '../pages/forms.ts'
import { sendPage } from '../pages/layout.ts'
import { csrfToken, endSession, ensureSession, formSession, loadSession, startSession } from '../pages/session.ts'
import { signInPage, twoFactorPage } from '../pages/views/sign-in.ts'
import { findUserById } from '../repositories/users.ts'
import { HtmlPage, Redirect } from '../schemas/pages.ts'

const MESSAGES: Record<string, string> = {
  invalid: 'Invalid username or password.',
  locked: 'This account is locked.',
  otp: 'Invalid two-factor code.',
}

const ReturnQuery = Type.Object({
  return_to: Type.Optional(Type.String({ description: 'Local page to continue with (the authorization request)' })),
  error: Type.Optional(Type.String({ description: 'Why the previous attempt failed' })),
})

export const signInRoutes = routePlugin('oauth-sign-in-routes', (app) => {
  const { db } = app
  const withReturn = (path: string, returnTo: string, error?: string) =>
    `${path}?return_to=${encodeURIComponent(returnTo)}${error ? `&error=${error}` : ''}`

  app.get(
    '/users/sign_in',
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: 'Sign-in page',
        querystring: ReturnQuery,
        response: { 200: HtmlPage('Form'), 429: HtmlPage('Too many new visits from this address (Retry-After)') },
      },
    },
    async (request, reply) => {
      const session = await ensureSession(request, reply, app)
      if ('wait' in session) return tooManyRequests(reply, session.wait)
      const query = request.query as Record<string, unknown>
      return sendPage(
        reply,
        200,
        'Sign in',
        signInPage({
          csrf: csrfToken(session),
          returnTo: safeReturnTo(field(query, 'return_to')),
          error: MESSAGES[field(query, 'error') ?? ''],
          signupEnabled: app.settings.signupEnabled,
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
      const session = await formSession(request, app)
      if (!session) return refuseForm(reply)
      const returnTo = safeReturnTo(field(request.body, 'return_to'))
      const check = await checkPassword(app, {
        login: field(request.body, 'username') ?? '',
        password: field(request.body, 'password') ?? '',
        ip: request.ip,
        twoFactor: 'next-step',
      })
      switch (check.outcome) {
        case 'throttled':
          return tooManyAttempts(reply, 'sign-in attempts', check.wait)
        case 'refused':
          return reply.redirect(withReturn('/users/sign_in', returnTo, 'invalid'), 303)
        case 'locked':
          return reply.redirect(withReturn('/users/sign_in', returnTo, 'locked'), 303)
        case 'second_factor':
          await startSession(reply, app, session, { pendingUserId: check.user.id })
          return reply.redirect(withReturn('/users/two_factor', returnTo), 303)
      }
      await startSession(reply, app, session, { userId: check.user.id })
      await completeSignIn(app, check.user, request.ip, 'password')
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
      const session = await loadSession(request, app)
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
      const session = await formSession(request, app)
      if (!session) return refuseForm(reply)
      const returnTo = safeReturnTo(field(request.body, 'return_to'))
      const user = session.row.pending_user_id ? await findUserById(db, session.row.pending_user_id) : undefined
      if (!user?.otp_secret) return reply.redirect(withReturn('/users/sign_in', returnTo), 303)
      const check = await checkSecondFactor(app, user, (field(request.body, 'otp_attempt') ?? '').trim(), request.ip)
      if (check.outcome === 'throttled') return tooManyAttempts(reply, 'attempts', check.wait)
      if (check.outcome !== 'accepted') return reply.redirect(withReturn('/users/two_factor', returnTo, 'otp'), 303)
      await startSession(reply, app, session, { userId: user.id })
      await completeSignIn(app, user, request.ip, 'password and two-factor code')
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
      const session = await formSession(request, app)
      if (!session) return refuseForm(reply)
      await endSession(reply, app, session)
      return reply.redirect('/users/sign_in', 303)
    },
  )
})
