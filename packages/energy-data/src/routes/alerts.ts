import Type from 'typebox'
import { ALERT_STATES, Alert, describeAlert, listAlerts } from '../alerts/history.ts'
import { checkRule, createRule, deleteRule, listRules, Rule, RuleConflict, RuleInput } from '../alerts/rules.ts'
import { routePlugin } from '../energy-app.ts'
import { DetailError, UnprocessableEntity } from '../errors.ts'
import { eventStreams } from '../event-stream.ts'
import { apiKeyHeaders, apiKeySecurity, MANAGE_ROUTE } from '../plugins/auth.ts'
import { HTTPValidationError, keyErrorResponses } from '../schemas/errors.ts'

const DAY_MS = 86_400_000
const EventStreamBody = {
  description:
    'A stream of server-sent events (`text/event-stream`) that stays open: one `snapshot` event, then one `alert` event per change.',
  content: { 'text/event-stream': { schema: Type.String() } },
}

/** Alert rules, the alerts they raise, and their stream. */
export const alertRoutes = routePlugin('energy-alert-routes', (app) => {
  const { pool, alerts, now } = app
  const streams = eventStreams(app)
  const common = { tags: ['Alerts'], headers: apiKeyHeaders, security: apiKeySecurity }

  app.get(
    '/alerts/rules',
    {
      schema: {
        ...common,
        summary: 'Alert rules',
        description: 'Every alert rule, by id.',
        response: { 200: Type.Object({ rules: Type.Array(Rule) }), ...keyErrorResponses },
      },
    },
    async () => ({ rules: await listRules(pool) }),
  )

  app.post(
    '/alerts/rules',
    {
      config: MANAGE_ROUTE,
      schema: {
        ...common,
        summary: 'Create an alert rule',
        description:
          'Kinds: `stale` (`datalogger` or `meter`, `minutes`: no sample for that long); `threshold` (`meter`, ' +
          '`above` or `below`, `quarters`: the quarter-hour value past the level for that many consecutive complete ' +
          'quarter hours); `night-baseline` (`meter`, `percent`: last night above the median of the 28 nights before ' +
          'by that much); `quarantine` (`count`, `minutes`, optionally `datalogger`: more than `count` quarantined ' +
          "records from one datalogger in `minutes`). `for_seconds` is Prometheus's `for`. Needs an API key with a " +
          'pattern under `/alerts/` (such as `/alerts/*`) or an access token with `manage_energy`.',
        body: RuleInput,
        response: {
          201: Rule,
          ...keyErrorResponses,
          409: { ...keyErrorResponses[404], description: 'A rule of that name exists' },
          422: HTTPValidationError,
        },
      },
    },
    async (request, reply) => {
      const checked = checkRule(request.body)
      const invalid = (issues: Array<{ field: string; msg: string }>) =>
        new UnprocessableEntity(issues.map((i) => ({ loc: ['body', i.field], msg: i.msg, type: 'value_error' })))
      if ('issues' in checked) throw invalid(checked.issues)
      try {
        const created = await createRule(pool, checked.rule)
        if ('issues' in created) throw invalid(created.issues)
        void alerts.tick()
        return reply.code(201).send(created.rule)
      } catch (error) {
        if (error instanceof RuleConflict) throw new DetailError(409, error.message)
        throw error
      }
    },
  )

  app.delete(
    '/alerts/rules/:id',
    {
      config: MANAGE_ROUTE,
      schema: {
        ...common,
        summary: 'Delete an alert rule',
        description: 'Its alerts stay in the history; an open one is resolved at the next evaluation.',
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) }),
        response: { 204: Type.Null({ description: 'Deleted' }), ...keyErrorResponses, 422: HTTPValidationError },
      },
    },
    async (request, reply) => {
      if (!(await deleteRule(pool, request.params.id))) throw new DetailError(404, 'Not Found')
      void alerts.tick()
      return reply.code(204).send(null)
    },
  )

  const Filter = Type.Object({
    state: Type.Optional(Type.Enum([...ALERT_STATES], { type: 'string' })),
    rule: Type.Optional(Type.String({ description: "The rule's name (`alertname`)" })),
    datalogger: Type.Optional(Type.String()),
    meter: Type.Optional(Type.Integer({ minimum: 1 })),
    since: Type.Optional(
      Type.String({ format: 'date-time', description: 'Resolved alerts ended after this (default: 24 hours ago)' }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 200 }),
  })

  app.get(
    '/alerts',
    {
      schema: {
        ...common,
        summary: 'Current and recent alerts',
        description:
          'The pending and firing alerts and those resolved since `since`, newest change first, filtered by ' +
          'state, rule, datalogger or meter.',
        querystring: Filter,
        response: { 200: Type.Object({ alerts: Type.Array(Alert) }), ...keyErrorResponses, 422: HTTPValidationError },
      },
    },
    async (request) => {
      const q = request.query
      const since = q.since === undefined ? new Date(now() - DAY_MS) : new Date(q.since)
      return { alerts: await listAlerts(pool, { ...q, since, limit: q.limit }) }
    },
  )

  app.get(
    '/alerts/stream',
    {
      schema: {
        ...common,
        summary: 'Alerts as they change (server-sent events)',
        description:
          'First a `snapshot` event (the `GET /alerts` answer without filters), then an `alert` event each time an ' +
          "alert's state changes (pending, firing, resolved), within one evaluation (ALERT_EVALUATION_SECONDS).",
        response: { 200: EventStreamBody, ...keyErrorResponses },
      },
    },
    async (request, reply) => {
      const unsubscribe = alerts.subscribe((alert) => stream.write('alert', describeAlert(alert)))
      const stream = streams.open(request, reply, unsubscribe)
      stream.write('snapshot', { alerts: await listAlerts(pool, { since: new Date(now() - DAY_MS), limit: 200 }) })
    },
  )
})
