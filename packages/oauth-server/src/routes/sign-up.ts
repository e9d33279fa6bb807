/** /users/sign_up: self-service accounts, only with OAUTH_SIGNUP_ENABLED (404 otherwise). */
import Type from 'typebox'
import { AccountError, createUser, sentence, userProblems } from '../accounts.ts'
import { completeSignIn } from '../credentials.ts'
import type { User } from '../db/schema.ts'
import { routePlugin } from '../oauth-app.ts'
import { notFound } from '../pages/account-routes.ts'
import { field, refuseForm, tooManyRequests } from '../pages/forms.ts'
import { sendPage } from '../pages/layout.ts'
import { csrfToken, ensureSession, formSession, startSession } from '../pages/session.ts'
import { type SignUpForm, signUpPage } from '../pages/views/sign-in.ts'
import { HtmlPage, Redirect } from '../schemas/pages.ts'

export const signUpRoutes = routePlugin('oauth-sign-up-routes', (app) => {
  const { db } = app

  app.get(
    '/users/sign_up',
    {
      schema: {
        tags: ['Pages'],
        summary: 'Registration page (when sign-up is enabled)',
        response: {
          200: HtmlPage('Form'),
          404: HtmlPage('Sign-up is disabled'),
          429: HtmlPage('Too many new visits from this address (Retry-After)'),
        },
      },
    },
    async (request, reply) => {
      if (!app.settings.signupEnabled) return notFound(reply)
      const session = await ensureSession(request, reply, app)
      if ('wait' in session) return tooManyRequests(reply, session.wait)
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
          429: HtmlPage('Too many new visits from this address (Retry-After)'),
        },
      },
    },
    async (request, reply) => {
      if (!app.settings.signupEnabled) return notFound(reply)
      const session = await formSession(request, app)
      if (!session) return refuseForm(reply)
      // each attempt hashes a password and may make an account: counted like a new visit
      const wait = await app.throttle.anonymous(request.ip)
      if (wait !== undefined) return tooManyRequests(reply, wait)
      const form: SignUpForm = {
        username: (field(request.body, 'username') ?? '').trim(),
        email: (field(request.body, 'email') ?? '').trim(),
        name: (field(request.body, 'name') ?? '').trim(),
      }
      const password = field(request.body, 'password') ?? ''
      // the form asks for a name and an email; the account rules say what each must be
      const input = { ...form, password }
      const errors: string[] = []
      if (!form.name) errors.push('Full name is required.')
      if (!form.email) errors.push('Email is required.')
      errors.push(...(await userProblems(db, input)).map(sentence))
      let user: User | undefined
      if (errors.length === 0) {
        try {
          // nothing proves the address is the person's: no client is told it until it is confirmed
          user = (await createUser(db, { ...input, emailConfirmed: false })).user
        } catch (error) {
          if (!(error instanceof AccountError)) throw error
          errors.push(...error.problems.map(sentence))
        }
      }
      if (user === undefined) {
        return sendPage(reply, 422, 'Register', signUpPage({ csrf: csrfToken(session), form, errors }))
      }
      await startSession(reply, app, session, { userId: user.id })
      await completeSignIn(app, user, request.ip, 'sign-up')
      return reply.redirect('/profile', 303)
    },
  )
})
