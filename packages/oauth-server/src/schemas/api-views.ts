import type { PersonalAccessToken, User } from '../db/schema.ts'

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null)
const day = (d: Date | null): string | null =>
  d ? `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}` : null

/** GitLab's UsersHelper#work_information: the job title at the organization, or either alone. */
function workInformation(user: User): string | null {
  if (user.job_title && user.organization) return `${user.job_title} at ${user.organization}`
  return user.job_title || user.organization || null
}

/** GitLab's UserBasic: a user in a list. `issuer` is this server's base URL. */
export function userBasic(user: User, issuer: string) {
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    state: user.locked ? 'blocked' : 'active',
    locked: user.locked,
    avatar_url: null,
    web_url: `${issuer}/${encodeURIComponent(user.username)}`,
  }
}

/** GitLab's User: one user as anyone with read access sees them (fields this server has no use for at their empty value). */
export function publicUser(user: User, issuer: string) {
  return {
    ...userBasic(user, issuer),
    created_at: iso(user.created_at),
    bio: user.bio,
    location: user.location,
    public_email: user.public_email || null,
    skype: '',
    linkedin: '',
    twitter: '',
    discord: '',
    website_url: user.website_url,
    organization: user.organization,
    job_title: user.job_title,
    pronouns: null,
    bot: false,
    work_information: workInformation(user),
    followers: 0,
    following: 0,
    local_time: null,
  }
}

/** GitLab's UserPublic, GET /api/v4/user: the signed-in user's own view; admins also see is_admin. */
export function currentUser(user: User, issuer: string) {
  return {
    ...publicUser(user, issuer),
    last_sign_in_at: iso(user.last_sign_in_at),
    confirmed_at: iso(user.confirmed_at),
    last_activity_on: day(user.last_activity_on),
    email: user.email,
    theme_id: 1,
    color_scheme_id: 1,
    projects_limit: 0,
    current_sign_in_at: iso(user.current_sign_in_at),
    identities: [],
    can_create_group: false,
    can_create_project: false,
    two_factor_enabled: user.otp_secret !== null,
    external: false,
    private_profile: false,
    commit_email: user.email,
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
