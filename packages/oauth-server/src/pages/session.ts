/**
 * Server-side browser sessions for the pages: the cookie carries a random 256-bit id, the
 * database only its digest. CSRF tokens derive from the raw id (HMAC), so they change with it
 * and never sit in the database. The id is replaced on every sign-in step (no fixation).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isHttpsIssuer } from '../config.ts'
import { ANONYMOUS_SESSION_TTL, SESSION_TTL } from '../domain/lifetimes.ts'
import { openSecret, sealSecret } from '../domain/secret-box.ts'
import { derive, digest, generateSecret, safeEqual } from '../domain/secrets.ts'
import type { OAuthServices } from '../oauth-app.ts'
import {
  deleteSession,
  findLiveSession,
  insertSession,
  type SessionRow,
  setSessionFlash,
  takeSessionFlash,
} from '../repositories/sessions.ts'
import { field } from './forms.ts'

/** What sessions need of the server. */
type Context = Pick<OAuthServices, 'db' | 'settings'>

export interface Session {
  rawId: string
  row: SessionRow
}

function cookieName(context: Context): string {
  // __Host- pins the cookie to this origin when it can be Secure
  return isSecure(context) ? '__Host-campus_session' : 'campus_session'
}

const isSecure = (context: Context) => isHttpsIssuer(context.settings)

export async function loadSession(request: FastifyRequest, context: Context): Promise<Session | undefined> {
  const rawId = request.cookies[cookieName(context)]
  if (!rawId || rawId.length > 100) return undefined
  const row = await findLiveSession(context.db, digest(rawId))
  return row ? { rawId, row } : undefined
}

function setCookie(reply: FastifyReply, context: Context, rawId: string, ttlSeconds: number): void {
  reply.setCookie(cookieName(context), rawId, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: isSecure(context),
    maxAge: ttlSeconds,
  })
}

/** A new session (anonymous, half signed-in or signed-in) replacing `previous`. */
export async function startSession(
  reply: FastifyReply,
  context: Context,
  previous: Session | undefined,
  state: { userId?: number; pendingUserId?: number } = {},
): Promise<Session> {
  if (previous) await deleteSession(context.db, previous.row.id_digest)
  const rawId = generateSecret('session')
  const signedIn = state.userId !== undefined
  const ttl = signedIn ? SESSION_TTL : ANONYMOUS_SESSION_TTL
  const row: SessionRow = {
    id_digest: digest(rawId),
    user_id: state.userId ?? null,
    pending_user_id: state.pendingUserId ?? null,
    authenticated_at: signedIn ? new Date() : null,
    expires_at: new Date(Date.now() + ttl * 1000),
  }
  await insertSession(context.db, row)
  setCookie(reply, context, rawId, ttl)
  return { rawId, row }
}

/**
 * The caller's session, or a new one; a new one is a row made for a caller nobody knows yet, so
 * an address may open so many per window (`throttle.anonymous`): past it, the seconds to wait.
 */
export async function ensureSession(
  request: FastifyRequest,
  reply: FastifyReply,
  context: Context & Pick<OAuthServices, 'throttle'>,
): Promise<Session | { wait: number }> {
  const current = await loadSession(request, context)
  if (current) return current
  const wait = await context.throttle.anonymous(request.ip)
  return wait === undefined ? startSession(reply, context, undefined) : { wait }
}

export async function endSession(reply: FastifyReply, context: Context, session: Session | undefined) {
  if (session) await deleteSession(context.db, session.row.id_digest)
  reply.clearCookie(cookieName(context), { path: '/' })
}

export const csrfToken = (session: Session): string => derive(session.rawId, 'csrf')

export function validCsrf(session: Session | undefined, token: unknown): session is Session {
  return session !== undefined && typeof token === 'string' && safeEqual(token, csrfToken(session))
}

/** The session a form was posted from, when the form carries its CSRF token (else undefined: refuse it). */
export async function formSession(request: FastifyRequest, context: Context): Promise<Session | undefined> {
  const session = await loadSession(request, context)
  return validCsrf(session, field(request.body, 'csrf_token')) ? session : undefined
}

const FLASH_PURPOSE = 'sessions.flash'

/** What the next page shows once: a notice, and values never shown again (secrets, codes). */
export interface Flash {
  notice?: string
  secret?: string
  codes?: string[]
}

/** Keeps a one-time message for the next page, sealed under the server key. */
export async function setFlash(
  context: Context,
  session: Session,
  flash: Flash,
  db: OAuthServices['db'] = context.db,
): Promise<void> {
  await setSessionFlash(
    db,
    session.row.id_digest,
    sealSecret(context.settings.secretKey, JSON.stringify(flash), FLASH_PURPOSE),
  )
}

/** Reads and clears the one-time message in one statement: it is shown once, even to two tabs. */
export async function takeFlash(context: Context, session: Session): Promise<Flash> {
  const sealed = await takeSessionFlash(context.db, session.row.id_digest)
  if (!sealed) return {}
  return JSON.parse(openSecret(context.settings.secretKey, sealed, FLASH_PURPOSE)) as Flash
}
