/**
 * GET /api/v4/audit_events and /api/v4/audit_events/:id: GitLab's instance audit events API
 * (ee/lib/api/audit_events.rb), administrators only, in its entity's shape (id, author_id,
 * entity_id, entity_type, event_name, details, created_at) and its offset pagination.
 */
import Type from 'typebox'
import { authenticate, authenticatedFirst, requireScope } from '../api-auth.ts'
import { PaginationQuery, pageOf, paginationHeaders } from '../api-pagination.ts'
import { scopesAllowing } from '../domain/scopes.ts'
import { ApiError, ApiParameterError } from '../errors.ts'
import { routePlugin } from '../oauth-app.ts'
import { type AuditEventRow, findAuditEvent, listAuditEvents } from '../repositories/audit-events.ts'
import { GITLAB_JSON } from '../response-headers.ts'
import { ApiErrorResponses, ApiSecurity, TokenQuery } from '../schemas/api.ts'
import { MessageBody, OAuthErrorBody } from '../schemas/oauth.ts'

const AuditEventView = Type.Object(
  {
    id: Type.Integer(),
    author_id: Type.Integer({
      description: '-1 when nobody was signed in (a failed sign-in), or for the command line',
    }),
    entity_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The user the event is about' }),
    entity_type: Type.String({ description: 'User, or Gitlab::Audit::InstanceScope' }),
    event_name: Type.String(),
    details: Type.Object({
      custom_message: Type.String(),
      author_name: Type.String(),
      target_id: Type.Union([Type.String(), Type.Null()]),
      target_type: Type.Union([Type.String(), Type.Null()]),
      target_details: Type.Union([Type.String(), Type.Null()]),
      ip_address: Type.Union([Type.String(), Type.Null()]),
      entity_path: Type.Union([Type.String(), Type.Null()]),
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { description: "GitLab's API::Entities::AuditEvent" },
)

const view = (row: AuditEventRow) => ({
  id: Number(row.id),
  author_id: row.author_id === null ? -1 : Number(row.author_id),
  entity_id: row.entity_id === null ? null : Number(row.entity_id),
  entity_type: row.entity_type,
  event_name: row.event_name,
  details: {
    custom_message: row.custom_message,
    author_name: row.author_name,
    target_id: row.target_id,
    target_type: row.target_type,
    target_details: row.target_details,
    ip_address: row.ip_address,
    entity_path: row.entity_path,
  },
  created_at: row.created_at.toISOString(),
})

/** An ISO 8601 instant of a filter, or GitLab's 400 naming the parameter. */
function instant(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined
  const parsed = new Date(value)
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(parsed.getTime())) {
    throw new ApiParameterError(`${name} is invalid`)
  }
  return parsed
}

export const apiAuditEventRoutes = routePlugin('oauth-api-audit-event-routes', (app) => {
  async function administrator(request: Parameters<typeof authenticate>[0]) {
    const principal = await authenticate(request, app)
    requireScope(principal, scopesAllowing({ method: request.method, usersApi: false }))
    if (!principal.user.admin) throw new ApiError(403, '403 Forbidden')
  }

  app.get(
    '/api/v4/audit_events',
    {
      ...GITLAB_JSON,
      ...authenticatedFirst(app),
      schema: {
        tags: ['API'],
        summary: 'Instance audit events, newest first (administrators; scope read_api or api)',
        description:
          "GitLab's filters: created_after and created_before (ISO 8601), entity_type (User or Gitlab::Audit::InstanceScope), entity_id (with entity_type). Offset pagination as every list. Events older than OAUTH_AUDIT_RETENTION_DAYS are purged.",
        security: ApiSecurity,
        querystring: Type.Object(
          {
            ...TokenQuery.properties,
            ...PaginationQuery,
            created_after: Type.Optional(Type.String({ description: 'ISO 8601' })),
            created_before: Type.Optional(Type.String({ description: 'ISO 8601' })),
            entity_type: Type.Optional(Type.String()),
            entity_id: Type.Optional(Type.Integer({ description: 'Needs entity_type' })),
          },
          { additionalProperties: true },
        ),
        response: {
          200: Type.Array(AuditEventView),
          400: Type.Union([OAuthErrorBody, MessageBody]),
          ...ApiErrorResponses,
        },
      },
    },
    async (request, reply) => {
      await administrator(request)
      const query = request.query
      if (query.entity_id !== undefined && query.entity_type === undefined) {
        throw new ApiParameterError('entity_type is missing, entity_id requires entity_type')
      }
      const page = pageOf(query)
      const { rows, total } = await listAuditEvents(
        app.db,
        {
          createdAfter: instant(query.created_after, 'created_after'),
          createdBefore: instant(query.created_before, 'created_before'),
          entityType: query.entity_type,
          entityId: query.entity_id,
        },
        { limit: page.perPage, offset: page.offset },
      )
      paginationHeaders(request, reply, app.settings.issuer, page, total)
      return rows.map(view)
    },
  )

  app.get(
    '/api/v4/audit_events/:id',
    {
      ...GITLAB_JSON,
      ...authenticatedFirst(app),
      schema: {
        tags: ['API'],
        summary: 'One instance audit event (administrators; scope read_api or api)',
        security: ApiSecurity,
        params: Type.Object({ id: Type.Integer() }),
        querystring: TokenQuery,
        response: { 200: AuditEventView, 404: MessageBody, ...ApiErrorResponses },
      },
    },
    async (request) => {
      await administrator(request)
      const row = await findAuditEvent(app.db, request.params.id)
      if (!row) throw new ApiError(404, '404 Audit Event Not Found')
      return view(row)
    },
  )
})
