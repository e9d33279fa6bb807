/**
 * The `/data` export path in one place: a validated request becomes a response body through
 * plan (bucket-aligned window and time slices), row cap, concurrency gate, read (one short query
 * per slice) and encode. Routes validate and hand the result to the reply.
 */
import { Readable } from 'node:stream'
import type { FastifyBaseLogger } from 'fastify'
import type pg from 'pg'
import { instantFormatter } from '../domain/time.ts'
import { DetailError, UnprocessableEntity } from '../errors.ts'
import {
  countSeries,
  planSeries,
  readSeries,
  type SeriesRequest,
  seriesBound,
  seriesFields,
} from '../repositories/measurements.ts'
import { type DataFormat, encoding } from './encoders.ts'
import type { WindowCache } from './window-cache.ts'

interface ExportRequest extends SeriesRequest {
  format: DataFormat
}

interface ExportBody {
  contentType: string
  /** The whole body when one slice holds the answer (a dashboard's day), else a stream. */
  body: Buffer | Readable
}

/** What an export needs from the response it feeds. */
interface ExportContext {
  log: FastifyBaseLogger
  /** Whose export it is (the credential's rate-limit key): each may hold so many streams at once. */
  holder: string
  /** Runs `listener` once the response has closed, whether it ended, failed or its client went away. */
  onClose(listener: () => void): void
  /** Closes the response when nothing could be sent to its client for `ms` (it stopped reading). */
  closeWhenIdle(ms: number): void
}

interface ExporterOptions {
  /** Where a request's rows are read: the primary's pool, or a standby's in turn. */
  readPool: () => pg.Pool
  /** Most rows one request may return. */
  maxRows: number
  /** Most multi-slice exports streamed at once by this process. */
  maxStreams: number
  /** Most of them one credential (or address) holds at once. */
  maxStreamsPerHolder: number
  /** A stream whose client reads nothing for this long is closed, freeing its place. */
  streamIdleMs: number
  /** Answers of windows wholly in the past (one slice), dropped when data is written for them. */
  cache: WindowCache
  /** The service's clock: what lies wholly before it is the past. */
  now: () => number
}

/** The request as a cache key: what the answer depends on, each list in one order. */
function cacheKey(request: ExportRequest): string {
  const { source } = request
  const normalised =
    source.kind === 'group'
      ? source
      : { ...source, ids: [...source.ids].sort((a, b) => a - b), tags: [...source.tags].sort() }
  return JSON.stringify([
    normalised,
    request.aggregation,
    request.zone,
    request.startMs,
    request.endMs,
    request.fill,
    request.coverage,
    request.totals ?? false,
    request.priced ?? [],
    request.format,
  ])
}

/** Rows per piece of the response body. */
const PIECE_ROWS = 100
/** Characters gathered before a write. */
const WRITE_CHARS = 32_768

export function createExporter(options: ExporterOptions) {
  const { cache } = options
  // each open export holds about three slices in memory however slowly its client reads:
  // bounding their number bounds the memory a crowd of slow clients can pin
  let openStreams = 0
  const heldBy = new Map<string, number>()

  /** Before anything is planned: fill=null answers every bucket, so arithmetic tells its rows. */
  function capBuckets(request: ExportRequest): void {
    const bound = seriesBound(request)
    if (request.fill === 'null' && bound.about > options.maxRows) throw tooManyRows(request, bound.about)
  }

  async function capRows(
    pool: pg.Pool,
    request: ExportRequest,
    plan: Awaited<ReturnType<typeof planSeries>>,
  ): Promise<void> {
    if (plan.bound <= options.maxRows) return
    // with fill=null every bucket is a row: the bound is the count
    const rows = request.fill === 'null' ? plan.bound : await countSeries(pool, request, plan, options.maxRows)
    if (rows <= options.maxRows) return
    throw tooManyRows(request, rows)
  }

  function tooManyRows(request: ExportRequest, rows: number): UnprocessableEntity {
    return new UnprocessableEntity([
      {
        loc: ['query'],
        msg:
          `The request would return ${rows} rows, more than the ${options.maxRows} allowed: narrow ` +
          'start_datetime/end_datetime, choose a coarser aggregation' +
          (request.source.kind === 'meters' ? ', or ask for fewer ids' : '') +
          ', and fetch the rest in further requests',
        type: 'too_many_rows',
      },
    ])
  }

  /**
   * A place among the streaming exports until the response closes: 429 when the credential holds
   * its share already (one caller cannot take every place), 503 when they are all taken. A client
   * that stops reading loses its place after `streamIdleMs`.
   */
  function enterGate(context: ExportContext): void {
    const held = heldBy.get(context.holder) ?? 0
    if (held >= options.maxStreamsPerHolder) {
      throw new DetailError(
        429,
        `Too many exports in progress for this credential (at most ${options.maxStreamsPerHolder}); retry when one ends`,
        { headers: { 'retry-after': '5' } },
      )
    }
    if (openStreams >= options.maxStreams) {
      throw new DetailError(503, 'Too many exports in progress; retry shortly', { headers: { 'retry-after': '5' } })
    }
    openStreams++
    heldBy.set(context.holder, held + 1)
    context.closeWhenIdle(options.streamIdleMs)
    context.onClose(() => {
      openStreams--
      const left = (heldBy.get(context.holder) ?? 1) - 1
      if (left > 0) heldBy.set(context.holder, left)
      else heldBy.delete(context.holder)
    })
  }

  return {
    /** Bytes of answers the cache holds now (at most ENERGY_CACHE_MB). */
    cachedBytes: (): number => cache.bytes,

    async open(request: ExportRequest, context: ExportContext): Promise<ExportBody> {
      // the caller has authenticated the request: only the body is kept, never the decision
      const key = cacheKey(request)
      const cached = await cache.get(key)
      if (cached) return { contentType: cached.contentType, body: cached.body }
      const generation = cache.generation
      const pool = options.readPool()
      capBuckets(request)
      const plan = await planSeries(pool, request)
      await capRows(pool, request, plan)
      const streaming = plan.edges.length > 2
      if (streaming) enterGate(context)
      const encoder = encoding(request.format, instantFormatter(request.zone))
      const begin = encoder.begin(seriesFields(request))
      // the first slice is read before the status line goes out, so a failing query is still a clean error
      const rows = readSeries(pool, request, plan, encoder.rowSql)
      const first = await rows.next()
      if (!streaming) {
        // one slice is the whole answer: a plain body, no stream machinery
        const body = Buffer.from(begin + (first.done ? '' : encoder.encode(first.value, true)) + encoder.end)
        if (plan.hi <= options.now()) {
          const { source } = request
          const table = source.kind === 'group' ? `${source.group}_15m` : 'data_15m'
          cache.set(key, { contentType: encoder.contentType, body, table, lo: plan.lo, hi: plan.hi }, generation)
        }
        return { contentType: encoder.contentType, body }
      }
      async function* pieces(): AsyncGenerator<string> {
        try {
          // pieces of a few hundred rows, gathered into writes of about 32 kB: few system calls,
          // and every string stays small enough for V8's young generation
          let pending = begin
          let opening = true
          // each write but the last keeps back the line break of its last row, so a body cut
          // between writes never ends on a whole line and cannot pass for a complete CSV or TXT
          const held = encoder.eol.length
          for (let batch = first; !batch.done; batch = await rows.next()) {
            for (let i = 0; i < batch.value.length; i += PIECE_ROWS) {
              pending += encoder.encode(batch.value.slice(i, i + PIECE_ROWS), opening)
              opening = false
              if (pending.length >= WRITE_CHARS) {
                yield held ? pending.slice(0, -held) : pending
                pending = held ? encoder.eol : ''
              }
            }
          }
          pending += encoder.end
          if (pending) yield pending
        } catch (error) {
          // headers are gone: all that is left is to cut the body short and say why in the log
          context.log.error({ err: error }, 'data stream failed')
          throw error
        }
      }
      return { contentType: encoder.contentType, body: Readable.from(pieces(), { objectMode: false }) }
    },
  }
}

export type Exporter = ReturnType<typeof createExporter>
