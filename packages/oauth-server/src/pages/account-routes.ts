/**
 * Route helpers of the account pages: GETs need a signed-in user (else the sign-in page, coming
 * back afterwards); POSTs need the session's CSRF token too and answer 303 (or the form again
 * with 422). Admin pages answer 404 to everyone else, so they do not reveal themselves.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import Type, { type TSchema } from 'typebox'
import type { OAuthApp } from '../oauth-app.ts'
import { HtmlPage, Redirect } from '../schemas/pages.ts'
import { type Account, currentAccount } from './account.ts'
import { field, refuseForm } from './forms.ts'
import { sendErrorPage } from './layout.ts'
import { validCsrf } from './session.ts'

type Handler = (request: FastifyRequest, reply: FastifyReply, account: Account) => Promise<FastifyReply>

interface Options {
  summary: string
  params?: TSchema
  querystring?: TSchema
  body?: Record<string, TSchema>
  admin?: boolean
  /** POST only: the form comes back with its errors */
  unprocessable?: boolean
}

export function notFound(reply: FastifyReply): FastifyReply {
  return sendErrorPage(reply, 404, 'Not found', 'The page you were looking for could not be found.')
}

const signInUrl = (request: FastifyRequest) => {
  const path = request.url.split('?')[0] ?? '/profile'
  return `/users/sign_in?return_to=${encodeURIComponent(path)}`
}

export function accountGet(app: OAuthApp, path: string, options: Options, handler: Handler) {
  app.get(
    path,
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: options.summary,
        ...(options.params ? { params: options.params } : {}),
        ...(options.querystring ? { querystring: options.querystring } : {}),
        response: {
          200: HtmlPage('The page'),
          302: Redirect('Not signed in: to the sign-in page, coming back afterwards'),
          404: HtmlPage(options.admin ? 'Unknown, or not an administrator' : 'Unknown item'),
        },
      },
    },
    async (request, reply) => {
      const account = await currentAccount(request, app)
      if (!account) return reply.redirect(signInUrl(request), 302)
      if (options.admin && !account.user.admin) return notFound(reply)
      return handler(request, reply, account)
    },
  )
}

export function accountPost(app: OAuthApp, path: string, options: Options, handler: Handler) {
  app.post(
    path,
    {
      attachValidation: true,
      schema: {
        tags: ['Pages'],
        summary: options.summary,
        consumes: ['application/x-www-form-urlencoded'],
        ...(options.params ? { params: options.params } : {}),
        body: Type.Object({ csrf_token: Type.String(), ...options.body }),
        response: {
          303: Redirect('Done: on to the next page'),
          403: HtmlPage('Missing or wrong CSRF token'),
          404: HtmlPage(options.admin ? 'Unknown, or not an administrator' : 'Unknown item'),
          ...(options.unprocessable ? { 422: HtmlPage('The form again, with its errors and the input kept') } : {}),
        },
      },
    },
    async (request, reply) => {
      const account = await currentAccount(request, app)
      // a signed-out browser's form is refused like a forged one: nothing changes
      if (!account || !validCsrf(account.session, field(request.body, 'csrf_token'))) {
        return refuseForm(reply)
      }
      if (options.admin && !account.user.admin) return notFound(reply)
      return handler(request, reply, account)
    },
  )
}
