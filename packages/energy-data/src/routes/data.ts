import type { ValidationIssue } from '@campus/shared'
import type { FastifyReply } from 'fastify'
import { GROUP_NAMES, GROUPS } from '../catalogue/groups.ts'
import type { Aggregation } from '../domain/aggregation.ts'
import { localDate } from '../domain/time.ts'
import { dataDefaults, resolveWindow } from '../domain/window.ts'
import { routePlugin } from '../energy-app.ts'
import { attachment, type DataFormat, FORMAT_BY_MEDIA_TYPE } from '../export/encoders.ts'
import { preferredByAccept } from '../negotiation.ts'
import { apiKeyHeaders, apiKeySecurity, credentialKey } from '../plugins/auth.ts'
import type { PricedMeasure } from '../repositories/costs.ts'
import type { SeriesSource } from '../repositories/measurements.ts'
import { meterIdRange, unknownMeterIds } from '../repositories/metadata.ts'
import { detailResponse, HTTPValidationError, keyErrorResponses } from '../schemas/errors.ts'
import {
  Data15m,
  dataQuerySchema,
  dataResponse,
  groupHeaderDescription,
  groupRowSchema,
  metersQuerySchema,
} from '../schemas/measurements.ts'

/** The query as validated by `dataQuerySchema` (defaults applied); named here, as the schema's enums are built from lists. */
interface DataQuery {
  aggregation: Aggregation
  data_format: DataFormat
  fill: 'none' | 'null'
  coverage: boolean
  totals: boolean
  start_datetime?: string
  end_datetime?: string
  timezone?: string
}

const busy = detailResponse(
  'Too many exports in progress in this process; see Retry-After',
  'Too many exports in progress; retry shortly',
)

/** Measurement series: `/data/meters` (per-meter table) and one route per group's wide table. */
export const dataRoutes = routePlugin('energy-data-routes', (app) => {
  const { db, exporter, settings, now } = app

  // before validation fills in the default: without `data_format`, Accept chooses the format
  app.addHook('preValidation', async (request) => {
    const query = request.query as Record<string, unknown> | undefined
    if (query && query.data_format === undefined) {
      const format = preferredByAccept(request.headers.accept, FORMAT_BY_MEDIA_TYPE)
      if (format && format !== 'raw') query.data_format = format
    }
  })

  async function stream(
    reply: FastifyReply,
    query: DataQuery,
    source: SeriesSource,
    series: string,
    issues: ValidationIssue[] = [],
    priced: PricedMeasure[] = [],
  ) {
    const { zone, ...window } = resolveWindow(query, {
      zone: settings.zone,
      defaults: dataDefaults(query.aggregation, now()),
      issues,
    })
    const response = await exporter.open(
      {
        source,
        format: query.data_format,
        aggregation: query.aggregation,
        fill: query.fill,
        coverage: query.coverage,
        totals: query.totals,
        ...(priced.length ? { priced } : {}),
        zone,
        ...window,
      },
      {
        log: reply.log,
        holder: credentialKey(reply.request),
        // a client gone before the export starts has closed its response already; a response
        // that does not emit 'close' once written (an injected request) is done at 'finish'
        onClose: (listener) => {
          if (reply.raw.destroyed) return listener()
          let called = false
          const once = () => {
            if (called) return
            called = true
            listener()
          }
          reply.raw.once('close', once)
          reply.raw.once('finish', once)
        },
        // closed when its client reads nothing for `ms`: the answer waits on the client (its
        // buffers full) and no byte leaves meanwhile; a slow database never counts against it
        closeWhenIdle: (ms) => {
          const raw = reply.raw
          let sent = -1
          let since = Date.now()
          const check = setInterval(
            () => {
              const now = raw.socket?.bytesWritten ?? 0
              if (!raw.writableNeedDrain || now !== sent) {
                sent = now
                since = Date.now()
              } else if (Date.now() - since >= ms) raw.destroy()
            },
            Math.max(20, Math.floor(ms / 5)),
          )
          check.unref()
          raw.once('close', () => clearInterval(check))
        },
      },
    )
    const disposition = attachment(query.data_format, {
      series,
      firstDay: localDate(window.startMs, zone),
      lastDay: localDate(window.endMs, zone),
      aggregation: query.aggregation,
    })
    if (disposition) reply.header('content-disposition', disposition)
    return reply.header('content-type', response.contentType).send(response.body)
  }

  app.get<{ Querystring: DataQuery & { ids?: number[]; tag: string[]; cost: boolean; co2: boolean } }>(
    '/data/meters',
    {
      schema: {
        tags: ['Data'],
        summary: 'Per-meter quarter hours',
        description:
          "Each meter's bucket, ordered by time then meter, in the unit of the meter's `unit_id` " +
          '(`/metadata/meters`): at 15 minutes the statistics of the samples each quarter hour ' +
          "received (an energy or water meter's: of its increments, `sum_value` its amount); in buckets of an " +
          "hour or more `avg_value` is the mean of the quarter-hour values (an energy or water meter's is its " +
          '`sum_value`), the others combine the statistics. ' +
          'Quarter hours tagged `ok` unless `tag` says otherwise. Buckets without any stored ' +
          'quarter hour are left out unless `fill=null`; `count_value` says how many samples a bucket holds, ' +
          "`coverage=true` how many of its quarter hours hold a row, `totals=true` adds the bucket's exact total, " +
          '`cost=true` and `co2=true` its cost and emissions at the tariffs and factors in force. A virtual meter ' +
          '(`/metadata/meters/`: `virtual`, `formula`) is read like any other.',
        headers: apiKeyHeaders,
        security: apiKeySecurity,
        querystring: { type: 'object', properties: { ...dataQuerySchema(settings.zone), ...metersQuerySchema } },
        response: {
          200: dataResponse(Data15m, 'Per-meter rows'),
          ...keyErrorResponses,
          422: HTTPValidationError,
          503: busy,
        },
      },
    },
    async (request, reply) => {
      const query = request.query
      let ids = query.ids
      const issues: ValidationIssue[] = []
      if (ids === undefined) {
        const { lowest } = await meterIdRange(db)
        ids = lowest === null ? [] : [lowest]
      } else {
        ids = [...new Set(ids)]
        for (const id of await unknownMeterIds(db, ids)) {
          issues.push({ loc: ['query', 'ids'], msg: `Meter ${id} does not exist`, type: 'value_error' })
        }
      }
      const tags = [...new Set(query.tag)]
      const priced: PricedMeasure[] = [...(query.cost ? ['cost' as const] : []), ...(query.co2 ? ['co2' as const] : [])]
      return stream(reply, query, { kind: 'meters', ids, tags }, 'meters', issues, priced)
    },
  )

  for (const group of GROUP_NAMES) {
    // the chiller plants are only kept at their stored resolution
    const aggregations: Aggregation[] | undefined = group === 'centrali_frigo' ? ['15 m'] : undefined
    const row = groupRowSchema(group)
    app.get<{ Querystring: DataQuery }>(
      `/data/${group}`,
      {
        schema: {
          tags: ['Data'],
          summary: GROUPS[group].summary,
          description:
            "Mean of each column per bucket, ordered by time; each column's quantity, unit and meter are in the " +
            'row schema. Buckets without any stored quarter hour are left out unless `fill=null`; a column with ' +
            'no value in a bucket is null; `coverage=true` says how many of its quarter hours hold a row, ' +
            '`totals=true` adds the exact totals of the columns that add up (volume, rain).',
          headers: apiKeyHeaders,
          security: apiKeySecurity,
          querystring: { type: 'object', properties: dataQuerySchema(settings.zone, aggregations) },
          response: {
            200: dataResponse(row, `${group} rows`, groupHeaderDescription(group)),
            ...keyErrorResponses,
            422: HTTPValidationError,
            503: busy,
          },
        },
      },
      async (request, reply) => stream(reply, request.query, { kind: 'group', group }, group),
    )
  }
})
