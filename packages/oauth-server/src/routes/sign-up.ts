/** /users/sign_up: self-service accounts, only with OAUTH_SIGNUP_ENABLED (404 otherwise). */
import Type from 'typebox'
import { AdminError, createUser } from '../admin.ts'
import { type SignUpForm, signUpPage } from '../authorization/pages.ts'
import type { ServerContext } from '../context.ts'
import { sendErrorPage, sendPage } from '../pages/layout.ts'
import { csrfToken, ensureSession, loadSession, startSession, validCsrf } from '../pages/session.ts'
import { findUserByEmail, recordSignIn } from '../repositories/users.ts'
import { FORBIDDEN, notFound } from './account-routes.ts'
import { field, HtmlPage, Redirect } from './pages-schema.ts'
import type { OAuthApp } from './types.ts'

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export function signUpRoutes(app: OAuthApp, context: ServerContext): void {
  const { db } = context

  app.get(
    '/users/sign_up',
    {
      schema: {
        tags: ['Pages'],
        summary: 'Registration page (when sign-up is enabled)',
        response: { 200: HtmlPage('Form'), 404: HtmlPage('Sign-up is disabled') },
      },
    },
    async (request, reply) => {
      if (!context.settings.signupEnabled) return notFound(reply)
      const session = await ensureSession(request, reply, context)
      const page = signUpPage({ csrf: csrfToken(session), form: { username: '', email: '', name: '' }, errors: [] })
      return sendPage(reply, 200, 'Register', page)
    },
  )

  app.post(
    '/users/sign_up',
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: 'Create an account and sign in',
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object({
          csrf_token: Type.String(),
          username: Type.Optional(Type.String()),
          email: Type.Optional(Type.String()),
          name: Type.Optional(Type.String()),
          password: Type.Optional(Type.String()),
        }),
        response: {
          303: Redirect('Signed in: to the profile'),
          403: HtmlPage('Missing or wrong CSRF token'),
          404: HtmlPage('Sign-up is disabled'),
          422: HtmlPage('The form again, with its errors and the input kept'),
        },
      },
    },
    async (request, reply) => {
      if (!context.settings.signupEnabled) return notFound(reply)
      const session = await loadSession(request, context)
      if (!validCsrf(session, field(request.body, 'csrf_token'))) {
        return sendErrorPage(reply, 403, 'Request refused', FORBIDDEN)
      }
      const form: SignUpForm = {
        username: (field(request.body, 'username') ?? '').trim(),
        email: (field(request.body, 'email') ?? '').trim(),
        name: (field(request.body, 'name') ?? '').trim(),
      }
      const password = field(request.body, 'password') ?? ''
      const errors: string[] = []
      if (!form.name) errors.push('Full name is required.')
      if (!EMAIL.test(form.email)) errors.push('Email is not a valid address.')
      else if (await findUserByEmail(db, form.email)) errors.push('Email is already taken.')
      let userId: number | undefined
      if (errors.length === 0) {
        try {
          const { user } = await createUser(db, { ...form, password })
          userId = user.id
        } catch (error) {
          if (!(error instanceof AdminError)) throw error
          errors.push(`${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`)
        }
      }
      if (userId === undefined) {
        return sendPage(reply, 422, 'Register', signUpPage({ csrf: csrfToken(session), form, errors }))
      }
      await startSession(reply, context, session, { userId })
      await recordSignIn(db, userId)
      return reply.redirect('/profile', 303)
    },
  )
}
