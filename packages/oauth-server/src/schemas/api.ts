import Type from 'typebox'
import { MessageBody, OAuthErrorBody } from './oauth.ts'

/**
 * A string or null as one JSON Schema type list (`["string", "null"]`, valid OpenAPI 3.1): the
 * response serializer writes it directly, where an anyOf would run a validator per field.
 */
const Nullable = (t: ReturnType<typeof Type.String>) => Type.Unsafe<string | null>({ ...t, type: ['string', 'null'] })

/** GitLab's UserBasic (lib/api/entities/user_safe.rb, user_basic.rb): what a list of users shows. */
export const UserBasic = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  name: Type.String(),
  state: Type.String({ description: 'active or blocked' }),
  locked: Type.Boolean(),
  avatar_url: Nullable(Type.String({ description: 'null: this server keeps no avatars' })),
  web_url: Type.String({ description: "The user's address on this server, as GitLab builds it" }),
})

/** GitLab's User (lib/api/entities/user.rb): one user, `GET /users/:id`. */
export const PublicUser = Type.Object({
  ...UserBasic.properties,
  created_at: Nullable(Type.String({ format: 'date-time' })),
  bio: Type.String(),
  location: Type.String(),
  public_email: Nullable(Type.String()),
  skype: Type.String(),
  linkedin: Type.String(),
  twitter: Type.String(),
  discord: Type.String(),
  website_url: Type.String(),
  organization: Type.String(),
  job_title: Type.String(),
  pronouns: Nullable(Type.String()),
  bot: Type.Boolean(),
  work_information: Nullable(Type.String()),
  followers: Type.Integer(),
  following: Type.Integer(),
  local_time: Nullable(Type.String()),
})

/** GitLab's UserPublic (lib/api/entities/user_public.rb): the user themself, `GET /user`. */
export const CurrentUser = Type.Object({
  ...PublicUser.properties,
  last_sign_in_at: Nullable(Type.String({ format: 'date-time' })),
  confirmed_at: Nullable(Type.String({ format: 'date-time' })),
  last_activity_on: Nullable(Type.String({ format: 'date' })),
  email: Nullable(Type.String()),
  theme_id: Type.Integer(),
  color_scheme_id: Type.Integer(),
  projects_limit: Type.Integer(),
  current_sign_in_at: Nullable(Type.String({ format: 'date-time' })),
  identities: Type.Array(Type.Object({ provider: Type.String(), extern_uid: Type.String() })),
  can_create_group: Type.Boolean(),
  can_create_project: Type.Boolean(),
  two_factor_enabled: Type.Boolean(),
  external: Type.Boolean(),
  private_profile: Type.Boolean(),
  commit_email: Nullable(Type.String()),
  is_admin: Type.Optional(Type.Boolean({ description: 'Only for administrators' })),
})

export const PersonalAccessTokenView = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  revoked: Type.Boolean(),
  created_at: Nullable(Type.String({ format: 'date-time' })),
  scopes: Type.Array(Type.String()),
  user_id: Type.Integer(),
  last_used_at: Nullable(Type.String({ format: 'date-time' })),
  active: Type.Boolean(),
  expires_at: Nullable(Type.String({ format: 'date' })),
})

/** GitLab's `GET /version` (lib/api/version.rb): the version and the revision it was built from. */
export const VersionView = Type.Object({
  version: Type.String({ description: "This server's version (it is not a GitLab release)" }),
  revision: Type.String({ description: 'The revision it was built from, or "unknown"' }),
})

/** 401 comes in two shapes: GitLab's message (nothing sent) or RFC 6750 invalid_token. */
export const ApiErrorResponses = {
  401: Type.Union([MessageBody, OAuthErrorBody], { description: 'No token, or invalid_token (WWW-Authenticate)' }),
  403: Type.Union([OAuthErrorBody, MessageBody], { description: 'insufficient_scope, or blocked account' }),
}

/** Where a token may come in the query string, as GitLab reads it. */
export const TokenQuery = Type.Object(
  {
    access_token: Type.Optional(Type.String({ description: 'OAuth access token (prefer the Authorization header)' })),
    bearer_token: Type.Optional(Type.String({ description: 'OAuth access token, as GitLab also accepts it' })),
    private_token: Type.Optional(
      Type.String({ description: 'Personal access token (prefer the PRIVATE-TOKEN header)' }),
    ),
  },
  { additionalProperties: true },
)

export const ApiSecurity: Array<Record<string, string[]>> = [
  { bearer: [] },
  { dpop: [] },
  { accessTokenQuery: [] },
  { bearerTokenQuery: [] },
  { privateToken: [] },
]
