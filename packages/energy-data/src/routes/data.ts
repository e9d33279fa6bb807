import { Readable } from 'node:stream'
import type { ValidationIssue } from '@campus/shared'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Kysely } from 'kysely'
import type pg from 'pg'
import { GROUP_COLUMNS, GROUP_NAMES, GROUPS, type GroupName } from '../catalogue/groups.ts'
import type { EnergyDatabase } from '../db/schema.ts'
import type { Aggregation } from '../domain/aggregation.ts'
import { DATA_FORMATS, type DataFormat, type Field, rowEncoder } from '../domain/formats.ts'
import { instantFormatter } from '../domain/time.ts'
import { dataDefaults, resolveWindow } from '../domain/window.ts'
import { DetailError, UnprocessableEntity } from '../errors.ts'
import { apiKeyHeaders, apiKeySecurity } from '../plugins/auth.ts'
import { countSeries, planSeries, readSeries, type SeriesSource } from '../repositories/measurements.ts'
import { lowestMeterId, unknownMeterIds } from '../repositories/metadata.ts'
import { DetailResponse, HTTPValidationError, keyErrorResponses } from '../schemas/errors.ts'
import {
  Data15m,
  dataQuerySchema,
  dataResponse,
  groupHeaderDescription,
  groupRowSchema,
  metersQuerySchema,
} from '../schemas/measurements.ts'

export interface DataRoutesOptions {
  db: Kysely<EnergyDatabase>
  pool: pg.Pool
  /** Default zone of local days and output offsets. */
  zone: string
  maxRows: number
  /** Most multi-slice exports streamed at once by this process. */
  maxStreams: number
  /** Clock of the default window (tests pin it). */
  now?: () => number
}

interface DataQuery {
  aggregation: Aggregation
  data_format: DataFormat
  start_datetime?: string
  end_datetime?: string
  timezone?: string
}

/** Rows per piece of the response body. */
const PIECE_ROWS = 100
/** Characters gathered before a write. */
const WRITE_CHARS = 32_768

const METER_FIELDS: Field[] = [
  { name: 'time_15m', kind: 'time' },
  { name: 'meter_id', kind: 'number' },
  { name: 'avg_value', kind: 'number' },
  { name: 'min_value', kind: 'number' },
  { name: 'max_value', kind: 'number' },
  { name: 'sum_value', kind: 'number' },
  { name: 'count_value', kind: 'number' },
  { name: 'tag', kind: 'string' },
]

const groupFields = (group: GroupName): Field[] => [
  { name: 'time_15m', kind: 'time' },
  ...GROUP_COLUMNS[group].map((name) => ({ name, kind: 'number' as const })),
]

const busy = { ...DetailResponse, description: 'Too many exports in progress in this process; see Retry-After' }

/** Measurement series: `/data/meters` (per-meter table) and one route per group's wide table. */
export async function dataRoutes(app: FastifyInstance, options: DataRoutesOptions): Promise<void> {
  const now = options.now ?? Date.now
  // each open export holds about two slices in memory however slowly its client reads:
  // bounding their number bounds the memory a crowd of slow clients can pin
  let openStreams = 0

  async function stream(
    reply: FastifyReply,
    query: DataQuery,
    source: SeriesSource,
    fields: Field[],
    extraIssues: ValidationIssue[] = [],
  ) {
    const { zone, ...window } = resolveWindow(query, {
      zone: options.zone,
      defaults: dataDefaults(query.aggregation, now()),
      issues: extraIssues,
    })
    const request = { source, format: query.data_format, aggregation: query.aggregation, zone, ...window }
    const plan = await planSeries(options.pool, request)
    if (plan.bound > options.maxRows) {
      const rows = await countSeries(options.pool, request, plan)
      if (rows > options.maxRows) {
        throw new UnprocessableEntity([
          {
            loc: ['query'],
            msg:
              `The request would return ${rows} rows, more than the ${options.maxRows} allowed: narrow ` +
              'start_datetime/end_datetime, choose a coarser aggregation' +
              (source.kind === 'meters' ? ', or ask for fewer ids' : '') +
              ', and fetch the rest in further requests',
            type: 'too_many_rows',
          },
        ])
      }
    }
    if (plan.edges.length > 2) {
      if (openStreams >= options.maxStreams) {
        throw new DetailError(503, 'Too many exports in progress; retry shortly', { headers: { 'retry-after': '5' } })
      }
      openStreams++
      // the response closes once, whether it ends, fails or its client goes away
      reply.raw.once('close', () => {
        openStreams--
      })
    }
    const encoder = rowEncoder(query.data_format, fields, instantFormatter(zone))
    // The first slice is read before the status line goes out, so a failing query is still a clean error.
    const rows = readSeries(options.pool, request, plan)
    const first = await rows.next()
    reply.header('content-type', DATA_FORMATS[query.data_format])
    if (plan.edges.length <= 2) {
      // one slice is the whole answer (a dashboard's day): a plain body, no stream machinery
      return reply.send(encoder.begin + (first.done ? '' : encoder.encode(first.value, true)) + encoder.end)
    }
    async function* body(): AsyncGenerator<string> {
      try {
        // pieces of a few hundred rows, gathered into writes of about 32 kB: few system calls,
        // and every string stays small enough for V8's young generation
        let pending = encoder.begin
        let opening = true
        for (let batch = first; !batch.done; batch = await rows.next()) {
          for (let i = 0; i < batch.value.length; i += PIECE_ROWS) {
            pending += encoder.encode(batch.value.slice(i, i + PIECE_ROWS), opening)
            opening = false
            if (pending.length >= WRITE_CHARS) {
              yield pending
              pending = ''
            }
          }
        }
        pending += encoder.end
        if (pending) yield pending
      } catch (error) {
        // headers are gone: all that is left is to cut the body short and say why in the log
        reply.log.error({ err: error }, 'data stream failed')
        throw error
      }
    }
    return reply.send(Readable.from(body(), { objectMode: false }))
  }

  app.get(
    '/data/meters',
    {
      schema: {
        tags: ['Data'],
        summary: 'Per-meter quarter hours',
        description:
          'Statistics of the raw samples of each meter per bucket, ordered by time then meter. ' +
          'Buckets without any stored quarter hour are left out (no null rows); `count_value` says how many ' +
          'samples a bucket holds.',
        headers: apiKeyHeaders,
        security: apiKeySecurity,
        querystring: { type: 'object', properties: { ...dataQuerySchema(), ...metersQuerySchema } },
        response: {
          200: dataResponse(Data15m, 'Per-meter rows'),
          ...keyErrorResponses,
          422: HTTPValidationError,
          503: busy,
        },
      },
    },
    async (request, reply) => {
      const query = request.query as DataQuery & { ids?: number[]; tag: string[] }
      let ids = query.ids
      const issues: ValidationIssue[] = []
      if (ids === undefined) {
        const lowest = await lowestMeterId(options.db)
        ids = lowest === null ? [] : [lowest]
      } else {
        ids = [...new Set(ids)]
        for (const id of await unknownMeterIds(options.db, ids)) {
          issues.push({ loc: ['query', 'ids'], msg: `Meter ${id} does not exist`, type: 'value_error' })
        }
      }
      const tags = [...new Set(query.tag)]
      return stream(reply, query, { kind: 'meters', ids, tags }, METER_FIELDS, issues)
    },
  )

  for (const group of GROUP_NAMES) {
    // the chiller plants are only kept at their stored resolution
    const aggregations: Aggregation[] | undefined = group === 'centrali_frigo' ? ['15 m'] : undefined
    const row = groupRowSchema(group)
    app.get(
      `/data/${group}`,
      {
        schema: {
          tags: ['Data'],
          summary: GROUPS[group].summary,
          description:
            'Mean of each column per bucket, ordered by time. Buckets without any stored quarter hour are left ' +
            'out (no null rows); a column with no value in a bucket is null.',
          headers: apiKeyHeaders,
          security: apiKeySecurity,
          querystring: { type: 'object', properties: dataQuerySchema(aggregations) },
          response: {
            200: dataResponse(row, `${group} rows`, groupHeaderDescription(group)),
            ...keyErrorResponses,
            422: HTTPValidationError,
            503: busy,
          },
        },
      },
      async (request, reply) => stream(reply, request.query as DataQuery, { kind: 'group', group }, groupFields(group)),
    )
  }
}
