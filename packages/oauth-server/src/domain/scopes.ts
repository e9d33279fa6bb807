/**
 * Scopes that guard something real (GitLab's names and meanings, and the data API's).
 * `api`: everything, read and write; `read_api`: every read route; `read_user`: reading users;
 * `openid` (+ `profile`, `email`): an id_token and /oauth/userinfo (OpenID Connect);
 * `read_energy`: every read endpoint of the energy data API, which introspects the token here;
 * `write_energy`: writing measurements to its ingest service (a gateway, by client credentials);
 * `manage_energy`: changing the data API's alert rules.
 */
export const SCOPES = [
  'api',
  'read_api',
  'read_user',
  'openid',
  'profile',
  'email',
  'read_energy',
  'write_energy',
  'manage_energy',
] as const
export type Scope = (typeof SCOPES)[number]

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  api: 'Full read and write access to the API, including your profile and tokens.',
  read_api: 'Read access to the API: your profile, other users, your tokens.',
  read_user: 'Read-only access to your profile (username, name, email) and to the public profiles of other users.',
  openid: 'Sign you in to the application with your identity (your user id).',
  profile: 'Your name and username, in the sign-in token.',
  email: 'Your email address, in the sign-in token.',
  read_energy: 'Read the energy data API: measurements, meters and their metadata, charts and reports.',
  write_energy: 'Write measurements to the energy data (its ingest service), as a datalogger gateway does.',
  manage_energy: 'Create and delete the alert rules of the energy data API.',
}

/**
 * Scopes an administrator alone gives (GitLab keeps its powerful scopes, `sudo` and `admin_mode`,
 * to administrators): an application holds one only when an administrator allowed it, a personal
 * access token only an administrator's. Writing measurements is one: with it, any meter.
 */
export const ADMINISTRATOR_SCOPES: readonly Scope[] = ['write_energy']

/** Scopes that write, or read everything: never granted to a client that registered itself unauthenticated. */
export const POWERFUL_SCOPES: readonly Scope[] = ['api', 'manage_energy', ...ADMINISTRATOR_SCOPES]

/** The administrator scopes among `scopes` that were not allowed: the one rule every writer of scopes applies. */
export const scopesNeedingAdministrator = (scopes: readonly string[], allowed: readonly string[]): string[] =>
  scopes.filter((s) => (ADMINISTRATOR_SCOPES as readonly string[]).includes(s) && !allowed.includes(s))

/** GitLab's default scope (Gitlab::Auth::DEFAULT_SCOPES, Doorkeeper's default_scopes). */
export const DEFAULT_SCOPES: readonly Scope[] = ['api']

/**
 * GitLab's scope rules of /api/v4: `api` opens every route, `read_api` every GET and HEAD
 * (lib/api/api.rb), `read_user` the GETs and HEADs of the users API (lib/api/users.rb).
 */
export function scopesAllowing(request: { method: string; usersApi: boolean }): Scope[] {
  const read = request.method === 'GET' || request.method === 'HEAD'
  if (!read) return ['api']
  return request.usersApi ? ['api', 'read_api', 'read_user'] : ['api', 'read_api']
}

export function isKnownScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}

/** `"api read_user"` -> `["api", "read_user"]` (RFC 6749 3.3: space-delimited, order irrelevant, deduplicated). */
export function parseScope(value: string | undefined): string[] {
  if (value === undefined) return []
  return [...new Set(value.split(' ').filter((s) => s.length > 0))]
}

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(' ')
}

/** True when every scope of `requested` is in `granted`. */
export function within(requested: readonly string[], granted: readonly string[]): boolean {
  return requested.every((s) => granted.includes(s))
}

/** RFC 6749 3.3 scope-token characters: %x21 / %x23-5B / %x5D-7E. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/

export type ScopeCheck = { ok: true; scopes: string[] } | { ok: false; reason: string }

/**
 * The scopes a request gets: what it asked for, all of it known and allowed for the client.
 * Nothing asked means GitLab's default scope, if the client has it (Doorkeeper: the default
 * scopes common to the server and the application; none in common is invalid_scope).
 */
export function resolveScopes(requested: string | undefined, allowed: readonly string[]): ScopeCheck {
  const asked = parseScope(requested)
  if (requested !== undefined && asked.length === 0) return { ok: false, reason: 'The requested scope is empty.' }
  for (const s of asked) {
    if (!SCOPE_TOKEN.test(s) || !isKnownScope(s)) return { ok: false, reason: `The scope "${s}" is unknown.` }
    if (!allowed.includes(s)) return { ok: false, reason: `The scope "${s}" is not allowed for this application.` }
  }
  if (asked.length) return { ok: true, scopes: asked }
  const defaults = DEFAULT_SCOPES.filter((s) => allowed.includes(s))
  if (defaults.length === 0) {
    return {
      ok: false,
      reason: `No scope was requested and the application lacks the default scope (${formatScope(DEFAULT_SCOPES)}): name the scopes to request.`,
    }
  }
  return { ok: true, scopes: defaults }
}
