/**
 * Audit events in GitLab's shape: one vocabulary of what is recorded, one way to record it.
 * An event names who acted (a user, nobody signed in, a client, the command line), what it is
 * about (a user, or the instance), its target and a sentence. No secret goes in: no token, code,
 * client secret, password, nor the login typed for an unknown account. Events of the pages and
 * the administration are written before their answer; the token endpoint's (tokens issued) are
 * written by batches within a second (one insert, not one commit per exchange), and on close.
 */
import type { Kysely } from 'kysely'
import type { OAuthDB } from './db/schema.ts'
import { insertAuditEvents, type NewAuditEvent } from './repositories/audit-events.ts'
import type { Db } from './repositories/tokens.ts'

export const AUDIT_EVENT_NAMES = [
  // sign-in (GitLab's names for the failures)
  'user_signed_in',
  'login_failed_with_standard_authentication',
  'login_failed_with_otp_authentication',
  'login_failed_with_webauthn_authentication',
  // second factors
  'two_factor_enabled',
  'two_factor_disabled',
  'passkey_added',
  'passkey_removed',
  // applications
  'oauth_application_created',
  'oauth_application_registered',
  'oauth_application_deleted',
  'oauth_application_secret_renewed',
  // consents and tokens
  'oauth_consent_granted',
  'oauth_consent_revoked',
  'oauth_token_issued',
  'oauth_token_revoked',
  'oauth_grant_revoked_on_replay',
  'personal_access_token_created',
  'personal_access_token_revoked',
  // administrators
  'user_created',
  'user_blocked',
  'user_unblocked',
  'oauth_application_trusted',
  'oauth_application_untrusted',
  'registration_token_created',
] as const

export type AuditEventName = (typeof AUDIT_EVENT_NAMES)[number]

/** GitLab's entity of an event about the instance rather than a user. */
export const INSTANCE_SCOPE = 'Gitlab::Audit::InstanceScope'

/** Who acted. */
export type AuditAuthor =
  | { user: { id: number; username: string } }
  /** nobody signed in (a failed sign-in, a registration) */
  | 'anonymous'
  | 'command_line'
  /** an application acting for itself (client credentials, a registered client) */
  | { client: { uid: string; name: string } }

export interface AuditEvent {
  event: AuditEventName
  author: AuditAuthor
  /** the user the event is about; absent: the instance */
  entity?: { id: number; username: string } | undefined
  target?: { type: string; id: string | number; details?: string | undefined } | undefined
  message: string
  ip?: string | undefined
}

function authorOf(author: AuditAuthor): { author_id: number | null; author_name: string } {
  if (author === 'anonymous') return { author_id: null, author_name: 'An unauthenticated user' }
  if (author === 'command_line') return { author_id: null, author_name: 'Command line (pnpm oauth)' }
  if ('user' in author) return { author_id: author.user.id, author_name: author.user.username }
  return { author_id: null, author_name: `${author.client.name} (${author.client.uid})` }
}

export function auditRow(event: AuditEvent): NewAuditEvent {
  return {
    ...authorOf(event.author),
    entity_type: event.entity ? 'User' : INSTANCE_SCOPE,
    entity_id: event.entity?.id ?? null,
    entity_path: event.entity?.username ?? null,
    event_name: event.event,
    target_type: event.target?.type ?? null,
    target_id: event.target === undefined ? null : String(event.target.id),
    target_details: event.target?.details ?? null,
    custom_message: event.message,
    ip_address: event.ip ?? null,
  }
}

export interface AuditLog {
  /** Writes the event now, in the caller's transaction when given one. */
  record(event: AuditEvent, db?: Db): Promise<void>
  /** The hot path's: written with the others of the same second, in one insert. */
  soon(event: AuditEvent): void
  /** Writes what `soon` holds. */
  flush(): Promise<void>
}

const FLUSH_MS = 1000
const MAX_HELD = 1000

export function auditLog(db: Kysely<OAuthDB>, onError: (error: unknown) => void): AuditLog {
  let held: NewAuditEvent[] = []
  let timer: NodeJS.Timeout | undefined
  const flush = async () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    const batch = held
    held = []
    await insertAuditEvents(db, batch).catch(onError)
  }
  return {
    record: (event, trx) => insertAuditEvents(trx ?? db, [auditRow(event)]),
    soon(event) {
      held.push(auditRow(event))
      if (held.length >= MAX_HELD) void flush()
      else timer ??= setTimeout(() => void flush(), FLUSH_MS).unref()
    },
    flush,
  }
}

/** An event a signed-in user causes about their own account. */
export const byUser = (user: { id: number; username: string }, ip: string) =>
  ({ author: { user }, entity: user, ip }) as const

/** The audit target of an application. */
export const applicationTarget = (application: { id: number; uid: string; name: string }) => ({
  type: 'Doorkeeper::Application',
  id: application.id,
  details: `${application.name} (${application.uid})`,
})
