/** The /api/v4 surface: scope enforcement is real on every route (GitLab's scope names). */
import type { FastifyReply } from 'fastify'
import Type from 'typebox'
import { attributesFromQuery } from '../api-attributes.ts'
import { authenticate, authenticatedFirst, requireScope, withPrincipal } from '../api-auth.ts'
import { PaginationQuery, pageOf, paginationHeaders } from '../api-pagination.ts'
import type { User } from '../db/schema.ts'
import { scopesAllowing } from '../domain/scopes.ts'
import { ApiError } from '../errors.ts'
import { routePlugin } from '../oauth-app.ts'
import { SMALL_ANSWERS } from '../oauth-endpoints.ts'
import { listPersonalAccessTokens } from '../repositories/personal-access-tokens.ts'
import { findUserById, findUsers, updateProfile } from '../repositories/users.ts'
import { API_JSON, GITLAB_JSON } from '../response-headers.ts'
import {
  ApiErrorResponses,
  ApiSecurity,
  CurrentUser,
  PersonalAccessTokenView,
  PublicUser,
  TokenQuery,
  UserBasic,
  VersionView,
} from '../schemas/api.ts'
import { currentUser, personalAccessToken, publicUser, userBasic } from '../schemas/api-views.ts'
import { MessageBody, OAuthErrorBody } from '../schemas/oauth.ts'
import { OAUTH_SERVER_VERSION } from '../service.ts'

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
          text = reply.serialize(currentUser(principal.user, app.settings.issuer)) as string
          currentUserTexts.set(principal.user, text)
        }
        return sendText(reply, text)
      }),
  )

  app.put(
    '/api/v4/user',
    {
      ...GITLAB_JSON,
      ...authenticatedFirst(app),
      preValidation: attributesFromQuery(Object.keys(ProfileBody.properties)),
      schema: {
        tags: ['API'],
        summary: "Update the current user's profile (scope api)",
        security: ApiSecurity,
        querystring: TokenQuery,
        body: Type.Optional(ProfileBody),
        response: { 200: CurrentUser, 400: OAuthErrorBody, ...ApiErrorResponses },
      },
    },
    async (request) => {
      const principal = await authenticate(request, app)
      requireScope(principal, scopesAllowing({ method: request.method, ...USERS_API }))
      const changes = Object.fromEntries(
        Object.entries(request.body ?? {}).map(([k, v]) => [k, k === 'name' ? String(v).trim() : String(v)]),
      )
      if (changes.name === '') throw new ApiError(400, '400 Bad request - name is empty')
      const user = await app.changes.commit((trx) => updateProfile(trx, principal.user.id, changes))
      if (!user) throw new ApiError(404, '404 User Not Found')
      return currentUser(user, app.settings.issuer)
    },
  )

  app.get(
    '/api/v4/users',
    {
      ...GITLAB_JSON,
      ...authenticatedFirst(app),
      schema: {
        tags: ['API'],
        summary:
          'Users, by id, a page at a time: by `username` for anyone signed in; every user, or a `search` in username, name and email, for administrators',
        security: ApiSecurity,
        querystring: Type.Object(
          {
            ...TokenQuery.properties,
            username: Type.Optional(Type.String({ maxLength: 255, description: 'Exactly this username (any case)' })),
            search: Type.Optional(
              Type.String({ maxLength: 255, description: 'Administrators: within username, name or email' }),
            ),
            ...PaginationQuery,
          },
          { additionalProperties: true },
        ),
        response: { 200: Type.Array(UserBasic), 400: OAuthErrorBody, ...ApiErrorResponses },
      },
    },
    async (request, reply) => {
      const principal = await authenticate(request, app)
      requireScope(principal, scopesAllowing({ method: request.method, ...USERS_API }))
      const { username, search } = request.query
      // lib/api/users.rb lets any user list every user; here only an administrator may, and anyone
      // may look a username up (what GitLab's clients do): the list of accounts stays private
      if (!principal.user.admin && (username === undefined || search !== undefined)) {
        throw new ApiError(403, '403 Forbidden - Not authorized to access /api/v4/users')
      }
      const page = pageOf(request.query)
      const { users, total } = await findUsers(
        app.db,
        { username, search },
        { limit: page.perPage, offset: page.offset },
      )
      paginationHeaders(request, reply, app.settings.issuer, page, total)
      return users.map((user) => userBasic(user, app.settings.issuer))
    },
  )

  app.get(
    '/api/v4/users/:id',
    {
      ...GITLAB_JSON,
      ...authenticatedFirst(app),
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
      return publicUser(user, app.settings.issuer)
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
      ...authenticatedFirst(app),
      schema: {
        tags: ['API'],
        summary: "The current user's personal access tokens (scope read_api or api)",
        security: ApiSecurity,
        querystring: Type.Object({ ...TokenQuery.properties, ...PaginationQuery }, { additionalProperties: true }),
        response: { 200: Type.Array(PersonalAccessTokenView), 400: OAuthErrorBody, ...ApiErrorResponses },
      },
    },
    async (request, reply) => {
      const principal = await authenticate(request, app)
      requireScope(principal, scopesAllowing({ method: request.method, ...OTHER_API }))
      const page = pageOf(request.query)
      // a user's tokens are few: the page is cut from the whole list
      const tokens = await listPersonalAccessTokens(app.db, principal.user.id)
      paginationHeaders(request, reply, app.settings.issuer, page, tokens.length)
      return tokens.slice(page.offset, page.offset + page.perPage).map(personalAccessToken)
    },
  )
})
