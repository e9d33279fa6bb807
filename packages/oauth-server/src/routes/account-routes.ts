/**
 * Route helpers of the account pages: GETs need a signed-in user (else the sign-in page, coming
 * back afterwards); POSTs need the session's CSRF token too and answer 303 (or the form again
 * with 422). Admin pages answer 404 to everyone else, so they do not reveal themselves.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import Type, { type TSchema } from 'typebox'
import type { ServerContext } from '../context.ts'
import { type Account, currentAccount } from '../pages/account.ts'
import { sendErrorPage } from '../pages/layout.ts'
import { validCsrf } from '../pages/session.ts'
import { field, HtmlPage, Redirect } from './pages-schema.ts'
import type { OAuthApp } from './types.ts'

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

export const FORBIDDEN = 'The form expired or did not come from this site. Reload the page and try again.'

export const IdParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,15}$' }) })

/** The numeric id of the path, or undefined for anything else. */
export function pathId(request: FastifyRequest): number | undefined {
  const id = field(request.params, 'id')
  return id && /^[0-9]{1,15}$/.test(id) ? Number(id) : undefined
}

export function notFound(reply: FastifyReply): FastifyReply {
  return sendErrorPage(reply, 404, 'Not found', 'The page you were looking for could not be found.')
}

const signInUrl = (request: FastifyRequest) => {
  const path = request.url.split('?')[0] ?? '/profile'
  return `/users/sign_in?return_to=${encodeURIComponent(path)}`
}

export function accountGet(app: OAuthApp, context: ServerContext, path: string, options: Options, handler: Handler) {
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
      const account = await currentAccount(request, context)
      if (!account) return reply.redirect(signInUrl(request), 302)
      if (options.admin && !account.user.admin) return notFound(reply)
      return handler(request, reply, account)
    },
  )
}

export function accountPost(app: OAuthApp, context: ServerContext, path: string, options: Options, handler: Handler) {
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
      const account = await currentAccount(request, context)
      // a signed-out browser's form is refused like a forged one: nothing changes
      if (!account || !validCsrf(account.session, field(request.body, 'csrf_token'))) {
        return sendErrorPage(reply, 403, 'Request refused', FORBIDDEN)
      }
      if (options.admin && !account.user.admin) return notFound(reply)
      return handler(request, reply, account)
    },
  )
}

/** Checkbox lists arrive as one string or a list. */
export function fieldList(body: unknown, name: string): string[] {
  const value = (body as Record<string, unknown> | undefined)?.[name]
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}
