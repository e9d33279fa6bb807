import { KINDS, type KindName } from './quantities.ts'

/**
 * The meters of the estate and what each measures. Their metadata (`type_id`, `unit_id`,
 * `quantity_id`) is written from here; a group column that mirrors a meter takes its kind from it.
 */
export interface MeterEntry {
  readonly id: number
  /** Description text after "<id>) ". */
  readonly text: string
  readonly datalogger: string
  readonly dateFrom: string
  readonly notes?: string
  /** Brick class. */
  readonly brick: string
  readonly kind: KindName
}

/** Brick class and kind of the usual meters. */
const ENERGY = { brick: 'brick:Electrical_Energy_Sensor', kind: 'energy' } as const
const POWER = { brick: 'brick:Electric_Power_Sensor', kind: 'power' } as const
const PV = { brick: 'brick:PV_Panel', kind: 'power' } as const
const WATER = { brick: 'brick:Water_Meter', kind: 'volume' } as const
const TEMPERATURE = { brick: 'brick:Air_Temperature_Sensor', kind: 'temperature' } as const
const IRRADIANCE = { brick: 'brick:Solar_Radiance_Sensor', kind: 'irradiance' } as const
const PRESSURE = { brick: 'brick:Pressure_Sensor', kind: 'pressure' } as const

const meter = <const I extends number, const P extends { brick: string; kind: KindName }>(
  id: I,
  text: string,
  datalogger: string,
  dateFrom: string,
  profile: P,
  notes?: string,
) => ({ id, text, datalogger, dateFrom, ...profile, ...(notes ? { notes } : {}) })

export const METERS = [
  meter(860, 'Quadro generale Aule P', 'DL-AULEP-01', '2019-03-01', ENERGY),
  meter(861, 'Inverter FV 1 Aule P', 'DL-AULEP-01', '2019-03-01', PV),
  meter(862, 'Inverter FV 2 Aule P', 'DL-AULEP-01', '2019-03-01', PV),
  meter(863, 'Rooftop 1 Aule P', 'DL-AULEP-01', '2019-03-01', POWER),
  meter(870, 'Quadro generale Castelfidardo', 'DL-CAST-01', '2017-09-15', ENERGY),
  meter(871, 'Fotovoltaico Castelfidardo', 'DL-CAST-01', '2017-09-15', PV),
  meter(880, 'Quadro generale Cittadella', 'DL-CIT-01', '2018-01-10', ENERGY),
  meter(881, 'Fotovoltaico Cittadella', 'DL-CIT-01', '2018-01-10', PV),
  meter(890, 'Quadro generale Energy Center', 'DL-EC-01', '2016-05-02', ENERGY),
  meter(891, 'Fotovoltaico Energy Center', 'DL-EC-01', '2016-05-02', PV),
  meter(900, 'Data center 1 totale', 'DL-DC-01', '2020-02-17', POWER),
  meter(901, 'Data center 1 carico IT', 'DL-DC-01', '2020-02-17', POWER),
  meter(910, 'Centrale frigo 1', 'DL-CF-01', '2018-06-01', POWER),
  meter(911, 'Centrale frigo 2', 'DL-CF-01', '2018-06-01', POWER),
  meter(912, 'Centrale frigo 3', 'DL-CF-01', '2018-06-01', POWER),
  meter(920, 'Contatore acqua sede centrale', 'DL-H2O-01', '2019-11-04', WATER),
  meter(921, 'Fontanella aula magna', 'DL-H2O-01', '2019-11-04', WATER),
  meter(922, 'Fontanella Aule P', 'DL-H2O-01', '2019-11-04', WATER),
  meter(930, 'Temperatura aria stazione meteo', 'DL-METEO-01', '2015-04-20', TEMPERATURE),
  meter(931, 'Radiazione solare globale', 'DL-METEO-01', '2015-04-20', IRRADIANCE),
  meter(932, 'Pressione atmosferica', 'DL-METEO-01', '2015-04-20', PRESSURE),
  meter(933, 'Colonnine ricarica auto', 'DL-EC-01', '2024-04-15', POWER, 'Quattro colonnine da 22 kW'),
] as const satisfies readonly MeterEntry[]

export type MeterId = (typeof METERS)[number]['id']

/** The metadata columns a meter's kind fixes. */
export function meterMetadata(meter: MeterEntry): { type_id: string; unit_id: string; quantity_id: string } {
  const kind = KINDS[meter.kind]
  return { type_id: meter.brick, unit_id: kind.unit, quantity_id: kind.quantityKind }
}

export function meterEntry(id: number): MeterEntry | undefined {
  return METERS.find((m) => m.id === id)
}

/**
 * The meters whose quarter-hour value is an amount (energy, volume): the quarter's `sum_value`, the
 * sum of the increments their dataloggers sent. Every other meter's value is a mean, `avg_value`.
 */
export const AMOUNT_METER_IDS: readonly number[] = METERS.filter((m) => KINDS[m.kind].combination === 'sum').map(
  (m) => m.id,
)

/**
 * The meters at the campus's connections: the main panel of each building and the main water meter.
 * Every other energy or volume meter lies behind one of them (a fountain behind 920), so their sum is
 * the campus's consumption, counted once: what the dashboard prices.
 */
export const CAMPUS_METERS: readonly MeterId[] = [860, 870, 880, 890, 920]
