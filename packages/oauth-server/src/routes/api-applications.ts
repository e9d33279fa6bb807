/**
 * GitLab's Applications API (lib/api/applications.rb), for administrators: the instance-wide
 * applications (no owner), created, listed, deleted and given a new secret, so that automation
 * (GitLab's Terraform provider, scripts) can register them. The shapes are GitLab's
 * Entities::Application and ApplicationWithSecret.
 */
import type { FastifyRequest } from 'fastify'
import Type from 'typebox'
import { AccountError, createApplication } from '../accounts.ts'
import { attributesFromQuery } from '../api-attributes.ts'
import { authenticate, authenticatedFirst, requireScope } from '../api-auth.ts'
import { type AuditEventName, applicationTarget } from '../audit.ts'
import type { Application } from '../db/schema.ts'
import { parseScope, scopesAllowing } from '../domain/scopes.ts'
import { digest, generateSecret } from '../domain/secrets.ts'
import { ApiError } from '../errors.ts'
import { routePlugin } from '../oauth-app.ts'
import {
  deleteOwnedApplication,
  findApplicationById,
  listApplicationsOwnedBy,
  lockApplication,
  updateOwnedApplication,
} from '../repositories/applications.ts'
import { GITLAB_JSON } from '../response-headers.ts'
import { ApiErrorResponses, ApiSecurity, TokenQuery } from '../schemas/api.ts'
import { MessageBody, OAuthErrorBody } from '../schemas/oauth.ts'

const ApplicationView = Type.Object({
  id: Type.Integer({ description: 'The id the other routes take (not application_id)' }),
  application_id: Type.String({ description: 'The client_id' }),
  application_name: Type.String(),
  callback_url: Type.String({ description: 'The redirect URIs, one per line' }),
  confidential: Type.Boolean(),
})

const ApplicationWithSecret = Type.Object({
  ...ApplicationView.properties,
  secret: Type.String({ description: 'Shown once: only its digest is kept (empty for a public application)' }),
})

const NewApplication = Type.Object(
  {
    name: Type.String({ description: 'Name of the application' }),
    redirect_uri: Type.String({ description: 'Redirect URI; several separated by white space or new lines' }),
    scopes: Type.String({ minLength: 1, description: 'Scopes, separated by spaces' }),
    confidential: Type.Boolean({ default: true, description: 'Keeps a secret (default true)' }),
  },
  { additionalProperties: true },
)

/** GitLab's render_validation_error!: the problems by attribute. */
const ValidationBody = Type.Object(
  { message: Type.Record(Type.String(), Type.Array(Type.String())) },
  { description: 'What keeps the application from being saved, by attribute' },
)

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) })

/** Our attribute names, as GitLab's API names them. */
const GITLAB_FIELD: Record<string, string> = { redirect_uris: 'redirect_uri', name: 'name', scopes: 'scopes' }

function view(application: Application) {
  return {
    id: application.id,
    application_id: application.uid,
    application_name: application.name,
    callback_url: application.redirect_uris.join('\n'),
    confidential: application.confidential,
  }
}

const NOT_FOUND = '404 Application Not Found'

export const apiApplicationRoutes = routePlugin('oauth-api-application-routes', (app) => {
  /** authenticated_as_admin!, with the scope GitLab asks of the method. */
  async function administrator(request: Parameters<typeof authenticate>[0]) {
    const principal = await authenticate(request, app)
    requireScope(principal, scopesAllowing({ method: request.method, usersApi: false }))
    if (!principal.user.admin) throw new ApiError(403, '403 Forbidden')
    return principal.user
  }

  /** An administrator's change to an instance-wide application, recorded. */
  const recordAdmin = (
    request: FastifyRequest,
    admin: { id: number; username: string },
    event: AuditEventName,
    application: { id: number; uid: string; name: string },
    message: string,
  ) =>
    app.audit.record({
      event,
      author: { user: admin },
      target: applicationTarget(application),
      message,
      ip: request.ip,
    })

  app.post(
    '/api/v4/applications',
    {
      ...GITLAB_JSON,
      ...authenticatedFirst(app),
      preValidation: attributesFromQuery(Object.keys(NewApplication.properties)),
      schema: {
        tags: ['API'],
        summary: 'Register an instance-wide application (administrators; scope api)',
        security: ApiSecurity,
        querystring: TokenQuery,
        body: NewApplication,
        response: {
          201: ApplicationWithSecret,
          // a request the schema refuses, or an application the rules refuse
          400: Type.Union([OAuthErrorBody, ValidationBody]),
          ...ApiErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const admin = await administrator(request)
      const { name, redirect_uri, scopes, confidential } = request.body
      try {
        const { application, secret } = await createApplication(app.db, {
          name,
          redirectUris: redirect_uri.split(/\s+/).filter(Boolean),
          scopes: parseScope(scopes),
          confidential,
          ownerId: null,
        })
        await recordAdmin(
          request,
          admin,
          'oauth_application_created',
          application,
          `Created the application ${application.name}`,
        )
        return reply.code(201).send({ ...view(application), secret: secret ?? '' })
      } catch (error) {
        if (!(error instanceof AccountError)) throw error
        const message: Record<string, string[]> = {}
        for (const problem of error.problems) {
          const field = GITLAB_FIELD[problem.field] ?? problem.field
          message[field] = [...(message[field] ?? []), problem.message]
        }
        return reply.code(400).send({ message })
      }
    },
  )

  app.get(
    '/api/v4/applications',
    {
      ...GITLAB_JSON,
      schema: {
        tags: ['API'],
        summary: 'The instance-wide applications (administrators; scope read_api or api)',
        security: ApiSecurity,
        querystring: TokenQuery,
        response: { 200: Type.Array(ApplicationView), ...ApiErrorResponses },
      },
    },
    async (request) => {
      await administrator(request)
      return (await listApplicationsOwnedBy(app.db, null)).map(view)
    },
  )

  app.delete(
    '/api/v4/applications/:id',
    {
      ...GITLAB_JSON,
      ...authenticatedFirst(app),
      schema: {
        tags: ['API'],
        summary: 'Delete an instance-wide application, its grants and tokens (administrators; scope api)',
        security: ApiSecurity,
        params: IdParams,
        querystring: TokenQuery,
        response: { 204: Type.Null({ description: 'Deleted' }), 404: MessageBody, ...ApiErrorResponses },
      },
    },
    async (request, reply) => {
      const admin = await administrator(request)
      const found = await findApplicationById(app.db, request.params.id)
      const deleted = await app.changes.commit((trx) => deleteOwnedApplication(trx, request.params.id, null))
      if (!deleted || !found) throw new ApiError(404, NOT_FOUND)
      await recordAdmin(request, admin, 'oauth_application_deleted', found, `Deleted the application ${found.name}`)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/v4/applications/:id/renew-secret',
    {
      ...GITLAB_JSON,
      ...authenticatedFirst(app),
      schema: {
        tags: ['API'],
        summary: 'A new secret for an instance-wide application; the old one stops working (administrators; scope api)',
        security: ApiSecurity,
        params: IdParams,
        querystring: TokenQuery,
        response: { 201: ApplicationWithSecret, 404: MessageBody, ...ApiErrorResponses },
      },
    },
    async (request, reply) => {
      const admin = await administrator(request)
      const secret = generateSecret('clientSecret')
      const renewed = await app.changes.commit(async (trx) => {
        await lockApplication(trx, request.params.id)
        const found = await findApplicationById(trx, request.params.id)
        if (!found || found.owner_id !== null || !found.confidential) return undefined
        return updateOwnedApplication(trx, found.id, null, { secret_digest: digest(secret) })
      })
      if (!renewed) throw new ApiError(404, NOT_FOUND)
      await recordAdmin(
        request,
        admin,
        'oauth_application_secret_renewed',
        renewed,
        `Renewed the secret of ${renewed.name}`,
      )
      return reply.code(201).send({ ...view(renewed), secret })
    },
  )
})
