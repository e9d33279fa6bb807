import { JSON_UTF8 } from '@campus/shared'
import Type from 'typebox'
import { sendCached } from '../dashboard/http-cache.ts'
import { routePlugin } from '../energy-app.ts'
import { DetailError } from '../errors.ts'
import { apiKeyHeaders, apiKeySecurity, PUBLIC_ROUTE } from '../plugins/auth.ts'
import {
  type DataloggerRow,
  findDatalogger,
  findMeter,
  lastInstalledMeter,
  listDataloggers,
  listMeters,
  type MeterRow,
  meterIdRange,
} from '../repositories/metadata.ts'
import { HTTPValidationError, keyErrorResponses, NotFoundResponse, RateLimitedResponse } from '../schemas/errors.ts'
import { Datalogger, Meter } from '../schemas/metadata.ts'
import { NotModified } from '../schemas/views.ts'

const iso = (d: Date | null) => (d ? d.toISOString() : null)

function meterBody(m: MeterRow) {
  return {
    id: m.id,
    description: m.description,
    notes: m.notes,
    date_from: iso(m.date_from),
    date_to: iso(m.date_to),
    datalogger_id: m.datalogger_id ?? '',
    type_id: m.type_id,
    unit_id: m.unit_id,
    quantity_id: m.quantity_id,
    // only a virtual meter says so: a real meter's answer is the contract's, unchanged
    ...(m.formula === null ? {} : { virtual: true as const, formula: m.formula }),
  }
}

function dataloggerBody(d: DataloggerRow) {
  return {
    id: d.id,
    description: d.description,
    notes: d.notes,
    serial: d.serial,
    date_from: iso(d.date_from),
    date_to: iso(d.date_to),
    ip: d.ip,
  }
}

const notFound = () => new DetailError(404, 'Not Found')
const withValidation = { ...keyErrorResponses, 422: HTTPValidationError }

/** Meters and dataloggers of the monitoring infrastructure. */
export const metadataRoutes = routePlugin('energy-metadata-routes', (app) => {
  const { db } = app
  const common = { tags: ['Metadata'], headers: apiKeyHeaders, security: apiKeySecurity }

  app.get(
    '/metadata/meters/',
    {
      schema: {
        ...common,
        summary: 'All meters',
        description: 'Every meter of the monitoring infrastructure, by id.',
        response: { 200: Type.Array(Meter), ...keyErrorResponses },
      },
    },
    async () => (await listMeters(db)).map(meterBody),
  )

  app.get(
    '/metadata/meters/last',
    {
      schema: {
        ...common,
        summary: 'Last installed meter',
        description: 'The meter with the latest installation date (`date_from`); 404 when there is none.',
        response: { 200: Meter, ...keyErrorResponses },
      },
    },
    async () => {
      const meter = await lastInstalledMeter(db)
      if (!meter) throw notFound()
      return meterBody(meter)
    },
  )

  app.get(
    '/metadata/meters/next',
    {
      config: PUBLIC_ROUTE,
      schema: {
        tags: ['Metadata'],
        summary: 'Next meter id',
        description:
          'The id the next installed meter should take (one above the highest in use), in the Meter shape: ' +
          'description is "<id>) " awaiting its text, `datalogger_id` is empty, every optional field null.',
        response: { 200: Meter, 304: NotModified, 404: NotFoundResponse, 429: RateLimitedResponse },
      },
    },
    async (request, reply) => {
      const id = ((await meterIdRange(db)).highest ?? 0) + 1
      const meter = {
        id,
        description: `${id}) `,
        notes: null,
        date_from: null,
        date_to: null,
        datalogger_id: '',
        type_id: null,
        unit_id: null,
        quantity_id: null,
      }
      // public: shared caches may answer for a minute (meters are installed by hand, rarely)
      return sendCached(request, reply, JSON.stringify(meter), JSON_UTF8, { maxAge: 60 })
    },
  )

  app.get(
    '/metadata/meters/:uuid',
    {
      schema: {
        ...common,
        summary: 'One meter',
        params: Type.Object({
          uuid: Type.String({ pattern: '^[0-9]{1,9}$', description: 'Meter id (an integer)', examples: ['860'] }),
        }),
        response: { 200: Meter, ...withValidation },
      },
    },
    async (request) => {
      const meter = await findMeter(db, Number(request.params.uuid))
      if (!meter) throw notFound()
      return meterBody(meter)
    },
  )

  app.get(
    '/metadata/dataloggers/',
    {
      schema: {
        ...common,
        summary: 'All dataloggers',
        response: { 200: Type.Array(Datalogger), ...keyErrorResponses },
      },
    },
    async () => (await listDataloggers(db)).map(dataloggerBody),
  )

  app.get(
    '/metadata/dataloggers/:uuid',
    {
      schema: {
        ...common,
        summary: 'One datalogger',
        params: Type.Object({
          uuid: Type.String({ minLength: 1, maxLength: 100, description: 'Datalogger id', examples: ['DL-AULEP-01'] }),
        }),
        response: { 200: Datalogger, ...withValidation },
      },
    },
    async (request) => {
      const datalogger = await findDatalogger(db, request.params.uuid)
      if (!datalogger) throw notFound()
      return dataloggerBody(datalogger)
    },
  )
})
