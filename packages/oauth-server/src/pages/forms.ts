/** Reading the forms of the pages: fields, the numeric id of a path, where to go after sign-in. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import Type from 'typebox'
import { sendErrorPage } from './layout.ts'

/** Form fields arrive as strings; a repeated field arrives as a list and is treated as absent. */
export function field(body: unknown, name: string): string | undefined {
  const value = (body as Record<string, unknown> | undefined)?.[name]
  return typeof value === 'string' ? value : undefined
}

/** A base no request names: a value that resolves off it was not a local path. */
const LOCAL = 'http://return-to.invalid'

/**
 * Only local pages may be returned to after sign-in: never an open redirect. The path comes back
 * as the URL parser writes it (percent-encoded, dot segments resolved), fit for a Location
 * header whatever was typed (`/profile/☃` becomes `/profile/%E2%98%83`).
 */
export function safeReturnTo(value: string | undefined): string {
  if (!value || value.includes('\\') || /[\r\n]/.test(value) || !value.startsWith('/')) return '/profile'
  let url: URL
  try {
    url = new URL(value, LOCAL)
  } catch {
    return '/profile'
  }
  if (url.origin !== LOCAL) return '/profile'
  const path = url.pathname + url.search
  const allowed =
    path.startsWith('/oauth/authorize?') ||
    path === '/oauth/device' ||
    path.startsWith('/oauth/device?') ||
    path === '/profile' ||
    path.startsWith('/profile/') ||
    path.startsWith('/admin/')
  return allowed ? path : '/profile'
}

/** Checkbox lists arrive as one string or a list. */
export function fieldList(body: unknown, name: string): string[] {
  const value = (body as Record<string, unknown> | undefined)?.[name]
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

export const IdParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,15}$' }) })

/** The numeric id of the path, or undefined for anything else. */
export function pathId(request: FastifyRequest): number | undefined {
  const id = field(request.params, 'id')
  return id && /^[0-9]{1,15}$/.test(id) ? Number(id) : undefined
}

/** 403 for a form without the session's CSRF token, saying why and what to do. */
export function refuseForm(
  reply: FastifyReply,
  advice = 'The form expired or did not come from this site. Reload the page and try again.',
): FastifyReply {
  return sendErrorPage(reply, 403, 'Request refused', advice)
}

/** 429 with Retry-After, after too many failures of the account or the address. */
/** 429 for an address that opened too many sessions (see `ensureSession`). */
export function tooManyRequests(reply: FastifyReply, wait: number) {
  reply.header('retry-after', String(wait))
  return sendErrorPage(
    reply,
    429,
    'Too many requests',
    `Too many new visits from this address. Try again in ${wait} seconds.`,
  )
}

export function tooManyAttempts(reply: FastifyReply, what: string, wait: number) {
  reply.header('retry-after', String(wait))
  return sendErrorPage(reply, 429, 'Too many attempts', `Too many failed ${what}. Try again in ${wait} seconds.`)
}
