import Type from 'typebox'
import { MessageBody, OAuthErrorBody } from './oauth.ts'

/**
 * A string or null as one JSON Schema type list (`["string", "null"]`, valid OpenAPI 3.1): the
 * response serializer writes it directly, where an anyOf would run a validator per field.
 */
const Nullable = (t: ReturnType<typeof Type.String>) => Type.Unsafe<string | null>({ ...t, type: ['string', 'null'] })

export const PublicUser = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  name: Type.String(),
  state: Type.String({ description: 'active or blocked' }),
  locked: Type.Boolean(),
  created_at: Nullable(Type.String({ format: 'date-time' })),
  bio: Type.String(),
  location: Type.String(),
  public_email: Nullable(Type.String()),
  website_url: Type.String(),
  organization: Type.String(),
  job_title: Type.String(),
})

export const CurrentUser = Type.Object({
  ...PublicUser.properties,
  last_sign_in_at: Nullable(Type.String({ format: 'date-time' })),
  confirmed_at: Nullable(Type.String({ format: 'date-time' })),
  last_activity_on: Nullable(Type.String({ format: 'date' })),
  email: Nullable(Type.String()),
  current_sign_in_at: Nullable(Type.String({ format: 'date-time' })),
  two_factor_enabled: Type.Boolean(),
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

export const ApiSecurity: Array<Record<string, string[]>> = [
  { bearer: [] },
  { accessTokenQuery: [] },
  { bearerTokenQuery: [] },
  { privateToken: [] },
]
