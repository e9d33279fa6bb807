import type { FastifyReply, FastifyRequest } from 'fastify'
import Type from 'typebox'
import { LANGUAGES } from '../charts/i18n.ts'
import { sendCached } from '../dashboard/http-cache.ts'
import { routePlugin } from '../energy-app.ts'
import { preferredByAccept } from '../negotiation.ts'
import { PUBLIC_ROUTE } from '../plugins/auth.ts'
import { type Block, REPORT_FORMATS, type ReportFormat, renderReport } from '../reports/document.ts'
import {
  buildMeterReport,
  buildPalinsestiReport,
  buildPvReport,
  buildWaterReport,
  DEFAULT_METER_DAYS,
  DEFAULT_REPORT_DAYS,
  MAX_REPORT_DAYS,
  type ReportContext,
} from '../reports/reports.ts'
import { CACHING_NOTE, cached, DetailBody, NotFoundBody, NotModified, ValidationErrorBody } from '../schemas/views.ts'

const bound = (which: 'start' | 'end', defaultDays: number) =>
  Type.Optional(
    Type.String({
      description:
        `${which === 'start' ? 'First' : 'Last'} instant covered. ` +
        '`YYYY-MM-DD hh:mm:ss` in UTC (also `T`, a date alone, or ISO 8601 with `Z` or an offset such as `+01:00`), ' +
        'read as on every endpoint. The report covers whole local days of `timezone`: from the day holding ' +
        '`start_datetime` to the day holding `end_datetime`. ' +
        (which === 'end'
          ? 'Default: the newest complete local day holding data.'
          : `Default: ${defaultDays} days ending with the end day.`),
      examples: [which === 'start' ? '2025-10-20T00:00:00+02:00' : '2025-10-26'],
    }),
  )

const timezoneParam = (zone: string) =>
  Type.Optional(
    Type.String({
      description:
        'IANA time zone of the local days and hours in the report and of the printed timestamps (ISO 8601 with ' +
        `offset). Default: the service's zone (ENERGY_TIMEZONE), here ${zone}.`,
      examples: ['Europe/Rome', 'UTC'],
    }),
  )

const Format = Type.Optional(
  Type.Enum([...REPORT_FORMATS], {
    title: 'ReportFormat',
    type: 'string',
    description:
      'Overrides `Accept`: `json` (the report as one JSON string, `application/json`), `markdown` ' +
      '(`text/markdown`) or `text` (`text/plain`, aligned columns).',
  }),
)

const ReportLang = Type.Optional(
  Type.Enum([...LANGUAGES], {
    title: 'Language',
    type: 'string',
    default: 'it',
    description: 'Language of the report: `it` (Italian, default; numbers as 1.234,56) or `en` (English; 1,234.56).',
  }),
)

const windowParams = (zone: string, defaultDays: number) => ({
  start_datetime: bound('start', defaultDays),
  end_datetime: bound('end', defaultDays),
  timezone: timezoneParam(zone),
  format: Format,
  lang: ReportLang,
})

/** Every 200 is JSON by default, as the contract says: the report is one JSON string. */
const ReportBody = {
  description:
    'The report: by default `application/json`, one JSON string holding the Markdown report ' +
    '(`response.json()` gives the text); the same report as `text/markdown` or `text/plain` through `Accept` ' +
    'or `format`.',
  content: {
    'application/json': {
      schema: Type.String({
        description: 'The Markdown report as one JSON string.',
        examples: ['# Water report\n\nFrom 2025-10-20T00:00:00+02:00 ...'],
      }),
    },
    'text/markdown': { schema: Type.String({ examples: ['# Water report\n\nFrom 2025-10-20T00:00:00+02:00 ...'] }) },
    'text/plain': { schema: Type.String({ examples: ['Water report\n============\n...'] }) },
  },
}

const RANGE_NOTE =
  'The report covers whole local days of `timezone`, at most ' +
  `${MAX_REPORT_DAYS}; a start after the end, a malformed datetime or an unknown zone answers 422. ` +
  'Every figure states its unit and how it is computed; units come from the series catalogue (the same ' +
  'quantities, units and meters the `/data` row schemas and `/metadata/meters` show). A report whose days are ' +
  'not all measured says its coverage at the top.'

/** Media types of the report formats; the first is the default. */
const MEDIA_TYPES: Record<string, ReportFormat> = {
  'application/json': 'json',
  'text/markdown': 'markdown',
  'text/plain': 'text',
}

/** The `format` parameter, else the media type `Accept` prefers (RFC 9110 weights), else JSON. */
export function chooseFormat(format: ReportFormat | undefined, accept: string | undefined): ReportFormat {
  if (format) return format
  return preferredByAccept(accept, MEDIA_TYPES) ?? 'json'
}

function send(
  request: FastifyRequest,
  reply: FastifyReply,
  blocks: Block[],
  format: ReportFormat | undefined,
): FastifyReply {
  const { body, contentType } = renderReport(blocks, chooseFormat(format, request.headers.accept))
  return sendCached(request, reply, body, contentType, { vary: 'Accept' })
}

/** The textual reports. */
export const reportRoutes = routePlugin('energy-report-routes', (app) => {
  const { db, settings, now } = app
  const context = (): ReportContext => ({ db, pool: app.pool, zone: settings.zone, now: now() })
  const WINDOW = windowParams(settings.zone, DEFAULT_REPORT_DAYS)
  const responses = { 200: cached(ReportBody), 304: NotModified, 404: NotFoundBody, 422: ValidationErrorBody }

  app.get(
    '/report/meter',
    {
      config: PUBLIC_ROUTE,
      schema: {
        tags: ['Report'],
        summary: 'Report on one meter',
        description:
          'Identity of the meter and its datalogger, coverage (quarter hours present and missing, longest ' +
          'interval between readings, data-quality tags), statistics (mean of the quarter-hour values, minimum ' +
          'and maximum with their time, total) and a table per local day, from the per-meter 15-minute table. ' +
          'The figures count the quarter hours tagged `ok`, as `/data/meters` does by default; every tag is counted ' +
          'in the coverage section. ' +
          `Unknown meter: 404.\n\n${RANGE_NOTE}\n\n${CACHING_NOTE}`,
        querystring: Type.Object({
          uuid: Type.Integer({
            minimum: 1,
            maximum: 2_147_483_647,
            description: 'Meter id (a positive integer).',
            examples: [860],
          }),
          ...windowParams(settings.zone, DEFAULT_METER_DAYS),
        }),
        response: { ...responses, 404: DetailBody },
      },
    },
    async (request, reply) => {
      const { uuid: meterId, format, ...window } = request.query
      return send(request, reply, await buildMeterReport(context(), meterId, window), format)
    },
  )

  app.get(
    '/report/water',
    {
      config: PUBLIC_ROUTE,
      schema: {
        tags: ['Report'],
        summary: 'Summary of the water meters',
        description:
          'Per water meter (main site and the five drinking fountains): total volume, mean and peak flow with ' +
          'its time, the night baseline (mean flow 02:00-04:00 local time, where a leak shows first), and daily ' +
          `volumes per local day.\n\n${RANGE_NOTE}\n\n${CACHING_NOTE}`,
        querystring: Type.Object(WINDOW),
        response: responses,
      },
    },
    async (request, reply) => {
      const { format, ...window } = request.query
      return send(request, reply, await buildWaterReport(context(), window), format)
    },
  )

  app.get(
    '/report/pv',
    {
      config: PUBLIC_ROUTE,
      schema: {
        tags: ['Report'],
        summary: 'Photovoltaic production and energy balance',
        description:
          'Production of the campus and of each plant (energy, share, peak power and its time), global ' +
          'irradiation from the weather station, the energy balance of the Aule P building quarter hour by ' +
          'quarter hour (PV used on site = min(production, consumption); surplus; grid withdrawal; ' +
          'self-consumption and self-sufficiency rates) and the production per local day.' +
          `\n\n${RANGE_NOTE}\n\n${CACHING_NOTE}`,
        querystring: Type.Object(WINDOW),
        response: responses,
      },
    },
    async (request, reply) => {
      const { format, ...window } = request.query
      return send(request, reply, await buildPvReport(context(), window), format)
    },
  )

  app.get(
    '/report/palinsesti',
    {
      config: PUBLIC_ROUTE,
      schema: {
        tags: ['Report'],
        summary: 'Operating schedules of a year',
        description:
          'When the three chiller plants (`cf1_tot`, `cf2_tot`, `cf3_tot`), the data centre (`tot_dc`) and ' +
          'the Aule P building (`consumo_aula_1p`) run: energy and running hours of the year, the weekday and ' +
          'weekend schedule (hours in which a series runs at least half of the time; running = above 10 % of ' +
          'its yearly peak), mean power by local hour of the day, energy and running hours by month. To stay ' +
          'clear of database timeouts the year is folded in the database into at most 12 x 2 x 24 cells per ' +
          'table; no row of the year is loaded into the service.' +
          `\n\n${CACHING_NOTE}`,
        querystring: Type.Object({
          year: Type.Optional(
            Type.Integer({
              minimum: 2000,
              maximum: 2100,
              description:
                'Calendar year in local time. Default: the last complete year holding data (the newest year the data reaches the end of); else the year of the newest data, partial.',
              examples: [2025],
            }),
          ),
          timezone: timezoneParam(settings.zone),
          format: Format,
          lang: ReportLang,
        }),
        response: responses,
      },
    },
    async (request, reply) => {
      const { format, year, ...query } = request.query
      return send(request, reply, await buildPalinsestiReport(context(), { ...query, year }), format)
    },
  )
})
