import Type, { type TSchema } from 'typebox'
import { GROUPS, type GroupName, groupSeries, type Series, totalledSeries } from '../catalogue/groups.ts'
import { unitSymbol } from '../catalogue/quantities.ts'
import { AGGREGATION_DESCRIPTION, AGGREGATION_VALUES, type Aggregation } from '../domain/aggregation.ts'
import { DEFAULT_TAGS, TAG_DESCRIPTION, TAGS } from '../domain/tags.ts'
import { DATA_FORMAT_DESCRIPTION, DATA_FORMAT_VALUES } from '../export/encoders.ts'

const Time15m = Type.String({
  format: 'date-time',
  description: 'Start of the bucket, ISO 8601 with the offset of `timezone`',
  examples: ['2025-03-30T00:00:00+01:00'],
})

/** `coverage=true` only. */
const Coverage = Type.Optional(
  Type.Number({
    minimum: 0,
    maximum: 1,
    description:
      'With `coverage=true` only: the quarter hours of the bucket that hold a stored row, over the quarter hours ' +
      'the bucket spans (1, 2 or 4 below a day; 92, 96 or 100 for a local day in Europe/Rome; and so on), 0 to 1.',
  }),
)

const inMeterUnit = (what: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${what}, in the unit of the meter's \`unit_id\`.` })

export const Data15m = Type.Object(
  {
    time_15m: Time15m,
    meter_id: Type.Integer(),
    avg_value: inMeterUnit(
      'Mean of the samples the quarter hour received (a power meter: its mean power; an energy or water ' +
        'meter: the mean increment its datalogger sent); aggregated: the mean of the quarter-hour values, each ' +
        "quarter hour weighing its 15 minutes, where an energy or water meter's quarter-hour value is its " +
        '`sum_value` (as a group column, so a column mirroring the meter gives the same number)',
    ),
    min_value: inMeterUnit('Smallest sample (an energy or water meter: smallest increment); aggregated: min of minima'),
    max_value: inMeterUnit('Largest sample (an energy or water meter: largest increment); aggregated: max of maxima'),
    sum_value: inMeterUnit(
      "Sum of the samples: an energy or water meter's energy or volume in the quarter hour (its value); for " +
        'other meters a statistic of the sampling (their energy is the sum of the quarter-hour values x 0.25 h); ' +
        'aggregated: sum of sums',
    ),
    count_value: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Raw samples behind the row; aggregated: sum of counts; 0 for a bucket filled by `fill=null`',
    }),
    tag: Type.Union([Type.String(), Type.Null()], {
      description:
        'Data-quality tag; `mixed` when an aggregated bucket holds several; null for a bucket filled by `fill=null`',
    }),
    total_value: Type.Optional(
      inMeterUnit(
        "With `totals=true` only: the sum of the bucket's quarter-hour values, exact whatever is missing: the " +
          "bucket's energy or volume for an energy or water meter; for a power meter, times 0.25 h, its energy",
      ),
    ),
    cost_value: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], {
        description:
          "With `cost=true` only: the bucket's cost in `cost_currency`, the sum of amount x price over its quarter " +
          'hours (an energy meter in kWh priced per kWh, a water meter in m³ per m³); null for a meter without ' +
          'cost (power, temperature...) or when a quarter hour of the bucket has no tariff',
        'x-combination': 'sum',
      }),
    ),
    cost_currency: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'With `cost=true` only: the currency of the tariffs (one for all), where `cost_value` is not null',
        examples: ['EUR'],
      }),
    ),
    cost_versions: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          'With `cost=true` only: the tariff versions that priced the bucket (`pnpm energy tariffs:list`), ' +
          'comma-separated in increasing order (`3` or `3,5` across a new import); null where none did',
        examples: ['3,5'],
      }),
    ),
    co2_value: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], {
        description:
          "With `co2=true` only: the bucket's emissions in kg CO2e (unit:KiloGM), the sum of amount x factor over its " +
          'quarter hours; null as `cost_value`',
        'x-unit': 'unit:KiloGM',
        'x-combination': 'sum',
      }),
    ),
    co2_versions: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          'With `co2=true` only: the emission factor versions that weighed the bucket (`pnpm energy emissions:list`), ' +
          'comma-separated in increasing order; null where none did',
      }),
    ),
    coverage: Coverage,
  },
  {
    title: 'Data15m',
    examples: [
      {
        time_15m: '2025-06-02T10:00:00+02:00',
        meter_id: 900,
        avg_value: 41.7,
        min_value: 39.2,
        max_value: 44.1,
        sum_value: 625.5,
        count_value: 15,
        tag: 'ok',
      },
    ],
  },
)

/** What a column holds, from the series catalogue: quantity, unit, how buckets combine it, the meter it mirrors. */
function seriesDescription(series: Series): string {
  const { kind } = series
  const symbol = unitSymbol(kind.unit)
  const bucket =
    kind.combination === 'mean'
      ? `An aggregated bucket holds the mean of its quarter hours${
          kind.unit === 'unit:KiloW'
            ? '; energy over a period is the sum of kW x 0.25 h over its measured quarter hours'
            : ''
        }.`
      : `An aggregated bucket holds the mean ${symbol} per quarter hour over its quarter hours holding a value; ` +
        `its exact total is \`${series.column}_total\` (with \`totals=true\`).`
  return (
    `${series.text}. ${kind.quantityKind} in ${symbol} (${kind.unit}): ${kind.text}. ${bucket}` +
    (series.meter ? ` Mirrors meter ${series.meter.id} (same reading, same unit).` : '')
  )
}

/** The row schema of one group's wide table: `time_15m` and its columns, each nullable and described by the catalogue. */
export function groupRowSchema(group: GroupName): TSchema {
  const properties: Record<string, TSchema> = { time_15m: Time15m }
  const example: Record<string, unknown> = { time_15m: '2025-06-02T10:00:00+02:00' }
  for (const series of groupSeries(group)) {
    const column = series.column
    properties[column] = Type.Union([Type.Number(), Type.Null()], {
      description: seriesDescription(series),
      'x-unit': series.kind.unit,
      'x-quantity-kind': series.kind.quantityKind,
      'x-combination': series.kind.combination,
      ...(series.meter ? { 'x-meter': series.meter.id } : {}),
    })
    example[column] = 12.5
  }
  for (const series of totalledSeries(group)) {
    const { unit, quantityKind } = series.kind
    properties[`${series.column}_total`] = Type.Optional(
      Type.Union([Type.Number(), Type.Null()], {
        description:
          `With \`totals=true\` only: the sum of \`${series.column}\` over the bucket's quarter hours, in ` +
          `${unitSymbol(unit)} (${unit}): its exact total, whatever is missing (null when none holds a value).`,
        'x-unit': unit,
        'x-quantity-kind': quantityKind,
        'x-combination': 'sum',
      }),
    )
  }
  properties.coverage = Coverage
  return Type.Object(properties, { title: GROUPS[group].title, examples: [example] })
}

/** The CSV/TXT header of a group, with each column's unit. */
export function groupHeaderDescription(group: GroupName): string {
  const units = groupSeries(group).map((s) => `\`${s.column}\` ${unitSymbol(s.kind.unit)}`)
  const totals = totalledSeries(group).map((s) => `\`${s.column}_total\` ${unitSymbol(s.kind.unit)}`)
  return (
    `Header line \`time_15m\` then the columns in this order (units: ${units.join(', ')})` +
    `${totals.length ? `, with \`totals=true\` then ${totals.join(', ')}` : ''}` +
    ', with `coverage=true` then `coverage`; then one line per row.'
  )
}

const DATETIME_DESCRIPTION =
  'UTC, `YYYY-MM-DD hh:mm:ss` (also `YYYY-MM-DDThh:mm:ss`, a date alone, or ISO 8601 with `Z` or an offset). ' +
  'Inclusive: the answer runs from the bucket containing `start_datetime` to the bucket containing ' +
  '`end_datetime`, both whole. Defaults: `end_datetime` is the current quarter hour; `start_datetime` is one ' +
  'day before it for `15 m`, `30 m`, `1 h`; 30 days for `1 d`; 12 weeks for `1 w`; a year for `1 mon`. ' +
  'Given only `start_datetime`, `end_datetime` is that span after it.'

/** The query of a `/data` route; `zone` is the service's (ENERGY_TIMEZONE), the default of `timezone`. */
export function dataQuerySchema(zone: string, aggregations: readonly Aggregation[] = AGGREGATION_VALUES) {
  return {
    aggregation: Type.Enum([...aggregations], {
      default: '15 m',
      description:
        aggregations.length === 1
          ? 'Only `15 m`: this group is served at its stored resolution.'
          : AGGREGATION_DESCRIPTION,
    }),
    data_format: Type.Enum([...DATA_FORMAT_VALUES], { default: 'raw', description: DATA_FORMAT_DESCRIPTION }),
    start_datetime: Type.Optional(
      Type.String({ description: `First timestamp. ${DATETIME_DESCRIPTION}`, examples: ['2025-03-30 00:00:00'] }),
    ),
    end_datetime: Type.Optional(
      Type.String({ description: `Last timestamp. ${DATETIME_DESCRIPTION}`, examples: ['2025-03-30 23:45:00'] }),
    ),
    fill: Type.Enum(['none', 'null'], {
      default: 'none',
      description:
        '`none`: buckets without any stored quarter hour are left out. `null`: every bucket of the window is ' +
        'answered (for `/data/meters` every bucket of every meter), an empty one with null fields (and ' +
        '`count_value` 0, `tag` null): a gap shows as rows, never as zero.',
    }),
    coverage: Type.Boolean({
      default: false,
      description:
        'Adds `coverage` to each row: the share (0 to 1) of the quarter hours the bucket spans that hold a stored ' +
        'row, DST-aware (a local day in Europe/Rome spans 92, 96 or 100). A bucket at 0.64 holds 61 of its 96 ' +
        'quarter hours: its mean stands for them only.',
    }),
    totals: Type.Boolean({
      default: false,
      description:
        "Adds each bucket's exact totals after the columns: `<column>_total` for every column that adds up over " +
        'time (volume, rain; their sum over the quarter hours holding a value), `total_value` on `/data/meters` ' +
        "(the sum of the bucket's quarter-hour values). A bucket's mean times its coverage is not its total where " +
        'a reading is missing inside a row.',
    }),
    timezone: Type.Optional(
      Type.String({
        description:
          'IANA zone of the local calendar (bucket boundaries of `1 h`, `1 d`, `1 w`, `1 mon`) and of the output offsets; ' +
          `default ${zone} (ENERGY_TIMEZONE).`,
        examples: ['Europe/Rome', 'UTC'],
      }),
    ),
  }
}

export const metersQuerySchema = {
  ids: Type.Optional(
    Type.Array(Type.Integer({ minimum: 0, maximum: 2_147_483_647 }), {
      minItems: 1,
      maxItems: 200,
      description: 'Meter ids (repeat the parameter: `ids=860&ids=861`). Default: the meter with the lowest id.',
    }),
  ),
  tag: Type.Array(Type.Enum([...TAGS]), { default: [...DEFAULT_TAGS], minItems: 1, description: TAG_DESCRIPTION }),
  cost: Type.Boolean({
    default: false,
    description:
      "Adds `cost_value`, `cost_currency` and `cost_versions` to each row: the bucket's cost, the sum over its quarter " +
      "hours of the meter's amount (kWh of an energy meter: electricity; m³ of a water meter: water; real or virtual) " +
      'times the price in force at that quarter hour (`pnpm energy tariffs:import`: local dates, days and times of ' +
      'the estate, exact across band edges, DST days and changes of validity). Null where the meter has no cost (a ' +
      'power meter) or a quarter hour of the bucket has no tariff: never 0, never a partial sum.',
  }),
  co2: Type.Boolean({
    default: false,
    description:
      "Adds `co2_value` and `co2_versions` to each row: the bucket's emissions in kg CO2e, the sum over its quarter " +
      "hours of the meter's amount times the emission factor in force (`pnpm energy emissions:import`); null as for " +
      '`cost`.',
  }),
}

export function dataResponse(row: TSchema, description: string, header = 'Header line, then one line per row.') {
  return {
    description,
    content: {
      'application/json': { schema: Type.Array(row) },
      'text/csv': { schema: Type.String({ description: `Comma-separated. ${header}` }) },
      'text/plain': { schema: Type.String({ description: `Tab-separated. ${header}` }) },
    },
  }
}
