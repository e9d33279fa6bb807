/**
 * Sign-in pages: password, then TOTP (or a passkey) when the account has two-factor
 * authentication; or a passkey alone, without a password.
 */

import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import type { FastifyReply } from 'fastify'
import Type from 'typebox'
import { checkPasskey, checkPassword, checkSecondFactor, completeSignIn } from '../credentials.ts'
import type { User } from '../db/schema.ts'
import { routePlugin } from '../oauth-app.ts'
import { field, refuseForm, safeReturnTo, tooManyAttempts, tooManyRequests } from '../pages/forms.ts'
import { sendPage } from '../pages/layout.ts'
import type { Session } from '../pages/session.ts'
import { csrfToken, endSession, ensureSession, formSession, loadSession, startSession } from '../pages/session.ts'
import { signInPage, twoFactorPage } from '../pages/views/sign-in.ts'
import { authenticationOptions, parseCeremonyResponse, verifyAuthentication } from '../passkeys.ts'
import {
  findPasskey,
  listPasskeys,
  recordPasskeyUse,
  setSessionChallenge,
  takeSessionChallenge,
} from '../repositories/passkeys.ts'
import { findUserById } from '../repositories/users.ts'
import { MessageBody } from '../schemas/oauth.ts'
import { HtmlPage, Redirect } from '../schemas/pages.ts'
import { throttleAccount } from '../throttle.ts'

const MESSAGES: Record<string, string> = {
  invalid: 'Invalid username or password.',
  locked: 'This account is locked.',
  otp: 'Invalid two-factor code.',
  passkey: 'The passkey was not accepted.',
}

/** The options of a WebAuthn ceremony (PublicKeyCredential*OptionsJSON), for @simplewebauthn/browser. */
const CeremonyOptions = Type.Object({}, { additionalProperties: true, description: 'WebAuthn options (JSON)' })

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
        { passkeys: true },
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
      const passkeys = (await listPasskeys(db, session.row.pending_user_id)).length > 0
      return sendPage(
        reply,
        200,
        'Two-factor authentication',
        twoFactorPage({ csrf: csrfToken(session), returnTo, error: MESSAGES[field(query, 'error') ?? ''], passkeys }),
        { passkeys },
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
          otp_attempt: Type.Optional(Type.String({ description: 'A TOTP or recovery code' })),
          webauthn_response: Type.Optional(Type.String({ description: "Or a passkey's assertion (JSON)" })),
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
      const assertion = field(request.body, 'webauthn_response')
      const check =
        assertion === undefined
          ? await checkSecondFactor(app, user, (field(request.body, 'otp_attempt') ?? '').trim(), request.ip)
          : await checkPasskey(app, user, request.ip, () => passkeyOf(session, assertion, user))
      if (check.outcome === 'throttled') return tooManyAttempts(reply, 'attempts', check.wait)
      if (check.outcome !== 'accepted') {
        return reply.redirect(
          withReturn('/users/two_factor', returnTo, assertion === undefined ? 'otp' : 'passkey'),
          303,
        )
      }
      await startSession(reply, app, session, { userId: user.id })
      await completeSignIn(
        app,
        user,
        request.ip,
        assertion === undefined ? 'password and two-factor code' : 'password and passkey',
      )
      return reply.redirect(returnTo, 303)
    },
  )

  /**
   * Whether `text` is a valid assertion of one of `user`'s passkeys for the session's challenge
   * (used up either way); its counter is recorded. A passkey alone (no password) must have
   * verified its user (PIN, biometrics).
   */
  async function passkeyOf(session: Session, text: string, user: User, alone = false): Promise<boolean> {
    const challenge = await takeSessionChallenge(db, session.row.id_digest)
    const answer = parseCeremonyResponse<AuthenticationResponseJSON>(text)
    const passkey = answer && (await findPasskey(db, answer.id))
    if (!challenge || !answer || !passkey || passkey.user_id !== user.id) return false
    const counter = await verifyAuthentication(app.settings, answer, challenge, passkey, alone)
    return counter !== undefined && (await recordPasskeyUse(db, passkey.id, counter))
  }

  /** Starts a ceremony on the session: its options, the challenge kept for the answer. */
  async function ceremony(reply: FastifyReply, session: Session, allowed?: Awaited<ReturnType<typeof listPasskeys>>) {
    const options = await authenticationOptions(app.settings, allowed)
    await setSessionChallenge(db, session.row.id_digest, options.challenge)
    return reply.header('cache-control', 'no-store').send(options)
  }

  const optionsSchema = (summary: string) => ({
    tags: ['Pages'],
    summary,
    consumes: ['application/x-www-form-urlencoded'],
    body: Type.Object({ csrf_token: Type.String() }),
    response: {
      200: CeremonyOptions,
      403: HtmlPage('Missing or wrong CSRF token'),
      404: MessageBody,
    },
  })

  app.post(
    '/users/two_factor/passkey/options',
    { attachValidation: true, schema: optionsSchema("WebAuthn options for the second step: the account's passkeys") },
    async (request, reply) => {
      const session = await formSession(request, app)
      if (!session) return refuseForm(reply)
      const userId = session.row.pending_user_id
      const passkeys = userId ? await listPasskeys(db, userId) : []
      if (passkeys.length === 0) return reply.code(404).send({ message: 'No passkey to use' })
      return ceremony(reply, session, passkeys)
    },
  )

  app.post(
    '/users/sign_in/passkey/options',
    {
      attachValidation: true,
      schema: optionsSchema('WebAuthn options of a sign-in with a passkey alone (discoverable)'),
    },
    async (request, reply) => {
      const session = await formSession(request, app)
      if (!session) return refuseForm(reply)
      return ceremony(reply, session)
    },
  )

  app.post(
    '/users/sign_in/passkey',
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: 'Sign in with a passkey alone: it verified its user, so it stands for both factors',
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object({
          webauthn_response: Type.String({ description: 'The assertion (JSON)' }),
          csrf_token: Type.String(),
          return_to: Type.Optional(Type.String()),
        }),
        response: {
          303: Redirect('Back to return_to, or back to the sign-in page with an error'),
          403: HtmlPage('Missing or wrong CSRF token'),
          429: HtmlPage('Too many failed attempts (Retry-After)'),
        },
      },
    },
    async (request, reply) => {
      const session = await formSession(request, app)
      if (!session) return refuseForm(reply)
      const returnTo = safeReturnTo(field(request.body, 'return_to'))
      const text = field(request.body, 'webauthn_response') ?? ''
      const answer = parseCeremonyResponse<AuthenticationResponseJSON>(text)
      const passkey = answer && (await findPasskey(db, answer.id))
      const user = passkey ? await findUserById(db, passkey.user_id) : undefined
      if (!user) {
        // an unknown passkey is a failed attempt of this address
        const wait = await app.throttle.attempt(throttleAccount(undefined, 'passkey'), request.ip)
        if (wait !== undefined) return tooManyAttempts(reply, 'attempts', wait)
        await takeSessionChallenge(db, session.row.id_digest)
        return reply.redirect(withReturn('/users/sign_in', returnTo, 'passkey'), 303)
      }
      const check = await checkPasskey(app, user, request.ip, () => passkeyOf(session, text, user, true))
      if (check.outcome === 'throttled') return tooManyAttempts(reply, 'attempts', check.wait)
      if (check.outcome !== 'accepted') return reply.redirect(withReturn('/users/sign_in', returnTo, 'passkey'), 303)
      if (user.locked) return reply.redirect(withReturn('/users/sign_in', returnTo, 'locked'), 303)
      await startSession(reply, app, session, { userId: user.id })
      await completeSignIn(app, user, request.ip, 'passkey')
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
