/** The /api/v4 surface: scope enforcement is real on every route (GitLab's scope names). */
import type { FastifyReply } from 'fastify'
import Type from 'typebox'
import { authenticate, requireScope, withPrincipal } from '../api-auth.ts'
import type { User } from '../db/schema.ts'
import { scopesAllowing } from '../domain/scopes.ts'
import { ApiError } from '../errors.ts'
import { routePlugin } from '../oauth-app.ts'
import { SMALL_ANSWERS } from '../oauth-endpoints.ts'
import { listPersonalAccessTokens } from '../repositories/personal-access-tokens.ts'
import { findUserById, updateProfile } from '../repositories/users.ts'
import { API_JSON, GITLAB_JSON } from '../response-headers.ts'
import {
  ApiErrorResponses,
  ApiSecurity,
  CurrentUser,
  PersonalAccessTokenView,
  PublicUser,
  VersionView,
} from '../schemas/api.ts'
import { currentUser, personalAccessToken, publicUser } from '../schemas/api-views.ts'
import { MessageBody, OAuthErrorBody } from '../schemas/oauth.ts'
import { OAUTH_SERVER_VERSION } from '../service.ts'

const TokenQuery = Type.Object(
  {
    access_token: Type.Optional(Type.String({ description: 'OAuth access token (prefer the Authorization header)' })),
    bearer_token: Type.Optional(Type.String({ description: 'OAuth access token, as GitLab also accepts it' })),
    private_token: Type.Optional(
      Type.String({ description: 'Personal access token (prefer the PRIVATE-TOKEN header)' }),
    ),
  },
  { additionalProperties: true },
)

const ProfileBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    bio: Type.Optional(Type.String({ maxLength: 255 })),
    location: Type.Optional(Type.String({ maxLength: 255 })),
    public_email: Type.Optional(Type.String({ maxLength: 255 })),
    website_url: Type.Optional(Type.String({ maxLength: 255 })),
    organization: Type.Optional(Type.String({ maxLength: 255 })),
    job_title: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
)

// GitLab's rules, by method and API (domain/scopes.ts)
const USERS_API = { usersApi: true }
const OTHER_API = { usersApi: false }

/**
 * GET /api/v4/user's text, serialised once per user row the token cache holds: those rows are
 * replaced, never changed, so the text made from one stays true while the row lives.
 */
const currentUserTexts = new WeakMap<User, string>()

/** Sends JSON text already serialised by the route's schema (typed replies take only values). */
function sendText(reply: FastifyReply, text: string): void {
  reply.type(API_JSON).send(text)
}

export const apiRoutes = routePlugin('oauth-api-routes', (app) => {
  app.get(
    '/api/v4/user',
    {
      ...SMALL_ANSWERS,
      ...GITLAB_JSON,
      schema: {
        tags: ['API'],
        summary: 'The current user (scope read_user, read_api or api)',
        security: ApiSecurity,
        querystring: TokenQuery,
        response: { 200: CurrentUser, ...ApiErrorResponses },
      },
    },
    (request, reply) =>
      withPrincipal(request, app, (principal) => {
        requireScope(principal, scopesAllowing({ method: request.method, ...USERS_API }))
        let text = currentUserTexts.get(principal.user)
        if (text === undefined) {
          // the route's own serialiser, by its 200 schema: the text is what it would send
          text = reply.serialize(currentUser(principal.user)) as string
          currentUserTexts.set(principal.user, text)
        }
        return sendText(reply, text)
      }),
  )

  app.put(
    '/api/v4/user',
    {
      ...GITLAB_JSON,
      schema: {
        tags: ['API'],
        summary: "Update the current user's profile (scope api)",
        security: ApiSecurity,
        querystring: TokenQuery,
        body: ProfileBody,
        response: { 200: CurrentUser, 400: OAuthErrorBody, ...ApiErrorResponses },
      },
    },
    async (request) => {
      const principal = await authenticate(request, app)
      requireScope(principal, scopesAllowing({ method: request.method, ...USERS_API }))
      const changes = Object.fromEntries(
        Object.entries(request.body).map(([k, v]) => [k, k === 'name' ? String(v).trim() : String(v)]),
      )
      if (changes.name === '') throw new ApiError(400, '400 Bad request - name is empty')
      const user = await app.changes.commit((trx) => updateProfile(trx, principal.user.id, changes))
      if (!user) throw new ApiError(404, '404 User Not Found')
      return currentUser(user)
    },
  )

  app.get(
    '/api/v4/users/:id',
    {
      ...GITLAB_JSON,
      schema: {
        tags: ['API'],
        summary: 'A user by id (scope read_user, read_api or api)',
        security: ApiSecurity,
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) }),
        querystring: TokenQuery,
        response: { 200: PublicUser, 404: MessageBody, ...ApiErrorResponses },
      },
    },
    async (request) => {
      const principal = await authenticate(request, app)
      requireScope(principal, scopesAllowing({ method: request.method, ...USERS_API }))
      const user = await findUserById(app.db, request.params.id)
      if (!user) throw new ApiError(404, '404 User Not Found')
      return publicUser(user)
    },
  )

  app.get(
    '/api/v4/version',
    {
      ...GITLAB_JSON,
      schema: {
        tags: ['API'],
        summary: "This server's version, as GitLab's GET /version (any signed-in token: read_user, read_api or api)",
        security: ApiSecurity,
        querystring: TokenQuery,
        response: { 200: VersionView, ...ApiErrorResponses },
      },
    },
    async (request) => {
      // lib/api/version.rb: authenticate!, then the version; read_user may read it too
      const principal = await authenticate(request, app)
      requireScope(principal, scopesAllowing({ method: request.method, ...USERS_API }))
      return { version: OAUTH_SERVER_VERSION, revision: 'unknown' }
    },
  )

  app.get(
    '/api/v4/personal_access_tokens',
    {
      ...GITLAB_JSON,
      schema: {
        tags: ['API'],
        summary: "The current user's personal access tokens (scope read_api or api)",
        security: ApiSecurity,
        querystring: TokenQuery,
        response: { 200: Type.Array(PersonalAccessTokenView), ...ApiErrorResponses },
      },
    },
    async (request) => {
      const principal = await authenticate(request, app)
      requireScope(principal, scopesAllowing({ method: request.method, ...OTHER_API }))
      return (await listPersonalAccessTokens(app.db, principal.user.id)).map(personalAccessToken)
    },
  )
})
