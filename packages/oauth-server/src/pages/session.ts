/**
 * Server-side browser sessions for the pages: the cookie carries a random 256-bit id, the
 * database only its digest. CSRF tokens derive from the raw id (HMAC), so they change with it
 * and never sit in the database. The id is replaced on every sign-in step (no fixation).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isHttpsIssuer } from '../config.ts'
import type { ServerContext } from '../context.ts'
import { ANONYMOUS_SESSION_TTL, SESSION_TTL } from '../domain/lifetimes.ts'
import { openSecret, sealSecret } from '../domain/secret-box.ts'
import { derive, digest, generateSecret, safeEqual } from '../domain/secrets.ts'
import { deleteSession, findLiveSession, type SessionRow } from '../repositories/sessions.ts'

export interface Session {
  rawId: string
  row: SessionRow
}

function cookieName(context: ServerContext): string {
  // __Host- pins the cookie to this origin when it can be Secure
  return isSecure(context) ? '__Host-campus_session' : 'campus_session'
}

const isSecure = (context: ServerContext) => isHttpsIssuer(context.settings)

export async function loadSession(request: FastifyRequest, context: ServerContext): Promise<Session | undefined> {
  const rawId = request.cookies[cookieName(context)]
  if (!rawId || rawId.length > 100) return undefined
  const row = await findLiveSession(context.db, digest(rawId))
  return row ? { rawId, row } : undefined
}

function setCookie(reply: FastifyReply, context: ServerContext, rawId: string, ttlSeconds: number): void {
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
  context: ServerContext,
  previous: Session | undefined,
  state: { userId?: number; pendingUserId?: number } = {},
): Promise<Session> {
  if (previous) await deleteSession(context.db, previous.row.id_digest)
  const rawId = generateSecret('session')
  const signedIn = state.userId !== undefined
  const ttl = signedIn ? SESSION_TTL : ANONYMOUS_SESSION_TTL
  const id = digest(rawId)
  await context.db
    .insertInto('sessions')
    .values({
      id_digest: id,
      user_id: state.userId ?? null,
      pending_user_id: state.pendingUserId ?? null,
      authenticated_at: signedIn ? new Date() : null,
      expires_at: new Date(Date.now() + ttl * 1000),
    })
    .execute()
  setCookie(reply, context, rawId, ttl)
  return {
    rawId,
    row: {
      id_digest: id,
      user_id: state.userId ?? null,
      pending_user_id: state.pendingUserId ?? null,
      authenticated_at: signedIn ? new Date() : null,
      expires_at: new Date(Date.now() + ttl * 1000),
    },
  }
}

export async function ensureSession(
  request: FastifyRequest,
  reply: FastifyReply,
  context: ServerContext,
): Promise<Session> {
  return (await loadSession(request, context)) ?? startSession(reply, context, undefined)
}

export async function endSession(reply: FastifyReply, context: ServerContext, session: Session | undefined) {
  if (session) await deleteSession(context.db, session.row.id_digest)
  reply.clearCookie(cookieName(context), { path: '/' })
}

export const csrfToken = (session: Session): string => derive(session.rawId, 'csrf')

export function validCsrf(session: Session | undefined, token: unknown): session is Session {
  return session !== undefined && typeof token === 'string' && safeEqual(token, csrfToken(session))
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
  context: ServerContext,
  session: Session,
  flash: Flash,
  db: ServerContext['db'] = context.db,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ flash_sealed: sealSecret(context.settings.secretKey, JSON.stringify(flash), FLASH_PURPOSE) })
    .where('id_digest', '=', session.row.id_digest)
    .execute()
}

/** Reads and clears the one-time message in one statement: it is shown once, even to two tabs. */
export async function takeFlash(context: ServerContext, session: Session): Promise<Flash> {
  const row = await context.db
    .with('old', (db) =>
      db.selectFrom('sessions').select(['id_digest', 'flash_sealed']).where('id_digest', '=', session.row.id_digest),
    )
    .updateTable('sessions')
    .from('old')
    .set({ flash_sealed: null })
    .whereRef('sessions.id_digest', '=', 'old.id_digest')
    .where('old.flash_sealed', 'is not', null)
    .returning('old.flash_sealed as sealed')
    .executeTakeFirst()
  if (!row?.sealed) return {}
  return JSON.parse(openSecret(context.settings.secretKey, row.sealed, FLASH_PURPOSE)) as Flash
}
