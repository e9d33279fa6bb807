import type { PersonalAccessToken, User } from '../db/schema.ts'

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null)
const day = (d: Date | null): string | null =>
  d ? `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}` : null

/** What anyone with read access sees of a user (GitLab's public user fields that this service has). */
export function publicUser(user: User) {
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    state: user.locked ? 'blocked' : 'active',
    locked: user.locked,
    created_at: iso(user.created_at),
    bio: user.bio,
    location: user.location,
    public_email: user.public_email || null,
    website_url: user.website_url,
    organization: user.organization,
    job_title: user.job_title,
  }
}

/** GET /api/v4/user: the signed-in user's own view; admins also see is_admin. */
export function currentUser(user: User) {
  return {
    ...publicUser(user),
    last_sign_in_at: iso(user.last_sign_in_at),
    confirmed_at: iso(user.confirmed_at),
    last_activity_on: day(user.last_activity_on),
    email: user.email,
    current_sign_in_at: iso(user.current_sign_in_at),
    two_factor_enabled: user.otp_secret !== null,
    ...(user.admin ? { is_admin: true } : {}),
  }
}

export function personalAccessToken(token: PersonalAccessToken & { expired?: boolean }) {
  const expired = token.expires_at !== null && day(token.expires_at)! <= day(new Date())!
  return {
    id: token.id,
    name: token.name,
    revoked: token.revoked_at !== null,
    created_at: iso(token.created_at),
    scopes: token.scopes,
    user_id: token.user_id,
    last_used_at: iso(token.last_used_at),
    active: token.revoked_at === null && !expired,
    expires_at: day(token.expires_at),
  }
}
