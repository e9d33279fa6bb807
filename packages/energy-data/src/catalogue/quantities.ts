/**
 * Quantities and units of the series catalogue: the QUDT units the estate measures in (and the few
 * it reports in), the kinds of series, and the one conversion every view uses. Nothing else in the
 * service scales a value from one unit to another.
 */

/** Seconds in a quarter hour: the span over which a rate and an amount of one quarter hour meet. */
export const QUARTER_SECONDS = 900

type Dimension =
  | 'power'
  | 'energy'
  | 'volume'
  | 'volume-flow'
  | 'irradiance'
  | 'irradiation'
  | 'temperature'
  | 'pressure'
  | 'ratio'
  | 'illuminance'
  | 'length'
  | 'speed'
  | 'angle'

interface UnitInfo {
  /** Printed after a number. */
  readonly symbol: string
  readonly dimension: Dimension
  /** QUDT's conversionMultiplier: the value of one unit in the SI unit of its dimension. */
  readonly multiplier: number
}

export const UNITS = {
  'unit:W': { symbol: 'W', dimension: 'power', multiplier: 1 },
  'unit:KiloW': { symbol: 'kW', dimension: 'power', multiplier: 1e3 },
  'unit:W-HR': { symbol: 'Wh', dimension: 'energy', multiplier: 3.6e3 },
  'unit:KiloW-HR': { symbol: 'kWh', dimension: 'energy', multiplier: 3.6e6 },
  'unit:MegaW-HR': { symbol: 'MWh', dimension: 'energy', multiplier: 3.6e9 },
  'unit:M3': { symbol: 'm³', dimension: 'volume', multiplier: 1 },
  'unit:L': { symbol: 'L', dimension: 'volume', multiplier: 1e-3 },
  'unit:M3-PER-HR': { symbol: 'm³/h', dimension: 'volume-flow', multiplier: 1 / 3600 },
  'unit:L-PER-HR': { symbol: 'L/h', dimension: 'volume-flow', multiplier: 1e-3 / 3600 },
  'unit:W-PER-M2': { symbol: 'W/m²', dimension: 'irradiance', multiplier: 1 },
  'unit:KiloW-HR-PER-M2': { symbol: 'kWh/m²', dimension: 'irradiation', multiplier: 3.6e6 },
  'unit:DEG_C': { symbol: '°C', dimension: 'temperature', multiplier: 1 },
  'unit:HectoPA': { symbol: 'hPa', dimension: 'pressure', multiplier: 100 },
  'unit:PERCENT': { symbol: '%', dimension: 'ratio', multiplier: 0.01 },
  'unit:LUX': { symbol: 'lx', dimension: 'illuminance', multiplier: 1 },
  'unit:MilliM': { symbol: 'mm', dimension: 'length', multiplier: 1e-3 },
  'unit:M-PER-SEC': { symbol: 'm/s', dimension: 'speed', multiplier: 1 },
  'unit:DEG': { symbol: '°', dimension: 'angle', multiplier: Math.PI / 180 },
} as const satisfies Record<string, UnitInfo>

export type UnitId = keyof typeof UNITS

/** An amount accumulates its rate over time: energy from power, volume from flow, irradiation from irradiance. */
const RATE_OF: Partial<Record<Dimension, Dimension>> = {
  energy: 'power',
  volume: 'volume-flow',
  irradiation: 'irradiance',
}

export function isUnitId(value: string | null | undefined): value is UnitId {
  return value !== null && value !== undefined && Object.hasOwn(UNITS, value)
}

/** `kWh` for `unit:KiloW-HR`; an unknown unit prints as its QUDT name. */
export function unitSymbol(unit: string | null | undefined): string {
  if (!unit) return ''
  return isUnitId(unit) ? UNITS[unit].symbol : unit.replace(/^unit:/, '')
}

/**
 * The factor turning a value in `from` into `to`: the same dimension scales; a rate becomes the
 * amount accumulated over `seconds` (kW over 900 s: x 0.25 h = kWh) and an amount the mean rate
 * over them (m³ in 900 s: / 0.25 h = m³/h). Any other pair is a programming error.
 */
export function conversionFactor(from: UnitId, to: UnitId, seconds?: number): number {
  const a = UNITS[from]
  const b = UNITS[to]
  if (a.dimension === b.dimension) return a.multiplier / b.multiplier
  if (seconds !== undefined && RATE_OF[b.dimension] === a.dimension) return (a.multiplier * seconds) / b.multiplier
  if (seconds !== undefined && RATE_OF[a.dimension] === b.dimension) return a.multiplier / seconds / b.multiplier
  throw new Error(`cannot convert ${from} to ${to}`)
}

/**
 * The SenML unit symbols (RFC 8428's registry and RFC 8798's additions) a datalogger may send,
 * as the catalogue's units. A symbol not here is refused, never guessed.
 */
const SENML_UNITS: Readonly<Record<string, UnitId>> = {
  W: 'unit:W',
  kW: 'unit:KiloW',
  Wh: 'unit:W-HR',
  kWh: 'unit:KiloW-HR',
  MWh: 'unit:MegaW-HR',
  m3: 'unit:M3',
  l: 'unit:L',
  L: 'unit:L',
  'm3/h': 'unit:M3-PER-HR',
  'l/h': 'unit:L-PER-HR',
  'W/m2': 'unit:W-PER-M2',
  Cel: 'unit:DEG_C',
  hPa: 'unit:HectoPA',
  '%RH': 'unit:PERCENT',
  '%': 'unit:PERCENT',
  lx: 'unit:LUX',
  mm: 'unit:MilliM',
  'm/s': 'unit:M-PER-SEC',
  deg: 'unit:DEG',
}

/** The SenML symbol of a catalogue unit (the first the table above gives), for those who send. */
export const SENML_UNIT_OF: Readonly<Partial<Record<UnitId, string>>> = Object.fromEntries(
  Object.entries(SENML_UNITS)
    .reverse()
    .map(([symbol, unit]) => [unit, symbol]),
)

/**
 * How a value in a SenML unit becomes one in a meter's unit, when one is a multiple of the other
 * (W to kW, Wh to kWh, L to m³); a reason otherwise. Without a unit, the meter's own is assumed.
 */
export function senmlConversion(symbol: string | undefined, to: UnitId): SenmlConversion {
  if (symbol === undefined) return AS_SENT
  const from = Object.hasOwn(SENML_UNITS, symbol) ? SENML_UNITS[symbol] : undefined
  if (!from) return { reason: `unit ${JSON.stringify(symbol)} is not a SenML unit this service knows` }
  // every sample asks: the known pairs' answers are made once (their number is bounded by the tables)
  const known = `${symbol} ${to}`
  let conversion = CONVERSIONS.get(known)
  if (!conversion) {
    conversion = knownConversion(symbol, from, to)
    CONVERSIONS.set(known, conversion)
  }
  return conversion
}

type SenmlConversion = { convert: (value: number) => number } | { reason: string }
const AS_SENT: SenmlConversion = { convert: (v) => v }
const CONVERSIONS = new Map<string, SenmlConversion>()

function knownConversion(symbol: string, from: UnitId, to: UnitId): SenmlConversion {
  if (UNITS[from].dimension !== UNITS[to].dimension) {
    return { reason: `unit ${symbol} does not convert to the meter's ${UNITS[to].symbol}` }
  }
  const factor = conversionFactor(from, to)
  // W to kW: dividing by 1000 is correctly rounded, multiplying by 0.001 (not a binary fraction) is not
  const divisor = Math.round(1 / factor)
  if (factor < 1 && Math.abs(divisor * factor - 1) < 1e-12) return { convert: (v) => v / divisor }
  return { convert: (v) => v * factor }
}

/**
 * A value of a quarter hour, or a sum of such values, from one unit into another: rates and
 * amounts meet over the quarter hour (the conversion is linear, so a sum converts like its terms).
 */
export function convertQuarter(value: number, from: UnitId, to: UnitId): number
export function convertQuarter(value: number | null, from: UnitId, to: UnitId): number | null
export function convertQuarter(value: number | null, from: UnitId, to: UnitId): number | null {
  return value === null ? null : value * conversionFactor(from, to, QUARTER_SECONDS)
}

/** The unit of the amount a rate accumulates: kW into kWh, W/m² into kWh/m², m³/h into m³. */
export const ACCUMULATES_TO: Partial<Record<UnitId, UnitId>> = {
  'unit:W': 'unit:KiloW-HR',
  'unit:KiloW': 'unit:KiloW-HR',
  'unit:W-PER-M2': 'unit:KiloW-HR-PER-M2',
  'unit:M3-PER-HR': 'unit:M3',
  'unit:L-PER-HR': 'unit:L',
}

/**
 * How the quarter hours of a series combine over time: `mean` for a level or a rate (power,
 * temperature, irradiance...), `sum` for an amount per quarter hour (energy, volume, rain).
 */
export type Combination = 'mean' | 'sum'

/**
 * What a meter's amounts are bought as: the commodity its tariffs and emission factors are given
 * for (`pnpm energy tariffs:import`), per unit of its kind (electricity per kWh, water per m³).
 */
export type Commodity = 'electricity' | 'water'
export const COMMODITIES: readonly Commodity[] = ['electricity', 'water']

export interface Kind {
  /** QUDT quantity kind. */
  readonly quantityKind: string
  readonly unit: UnitId
  readonly combination: Combination
  /** What the kind is, for people. */
  readonly text: string
  /**
   * The range a sample of a live meter of this kind can plausibly take (an amount's: one increment);
   * a quarter hour holding a sample outside it is tagged `suspect` (docs/LIVE.md, the tag rules).
   */
  readonly plausible?: { readonly min: number; readonly max: number }
  /** The commodity an amount of this kind is priced and weighed as; none: it has no cost. */
  readonly commodity?: Commodity
}

/**
 * No reading of the estate comes near this magnitude in its meter's unit (a register of 10^15 kWh,
 * a power of 10^15 kW): a sample beyond it is refused (`out_of_range`), so that the sums of a
 * quarter hour and of its rollups stay far inside a double's range whatever is sent.
 */
export const REFUSED_MAGNITUDE = 1e15

export const KINDS = {
  power: {
    quantityKind: 'quantitykind:Power',
    unit: 'unit:KiloW',
    combination: 'mean',
    text: 'mean power over the quarter hour',
    plausible: { min: -1000, max: 10_000 },
  },
  energy: {
    quantityKind: 'quantitykind:Energy',
    unit: 'unit:KiloW-HR',
    combination: 'sum',
    text: 'energy in the quarter hour',
    plausible: { min: 0, max: 2500 },
    commodity: 'electricity',
  },
  volume: {
    quantityKind: 'quantitykind:Volume',
    unit: 'unit:M3',
    combination: 'sum',
    text: 'volume in the quarter hour',
    plausible: { min: 0, max: 100 },
    commodity: 'water',
  },
  temperature: {
    quantityKind: 'quantitykind:Temperature',
    unit: 'unit:DEG_C',
    combination: 'mean',
    text: 'mean temperature over the quarter hour',
    plausible: { min: -40, max: 60 },
  },
  irradiance: {
    quantityKind: 'quantitykind:Irradiance',
    unit: 'unit:W-PER-M2',
    combination: 'mean',
    text: 'mean irradiance over the quarter hour',
    plausible: { min: -10, max: 1500 },
  },
  pressure: {
    quantityKind: 'quantitykind:Pressure',
    unit: 'unit:HectoPA',
    combination: 'mean',
    text: 'mean pressure over the quarter hour',
    plausible: { min: 870, max: 1085 },
  },
  humidity: {
    quantityKind: 'quantitykind:RelativeHumidity',
    unit: 'unit:PERCENT',
    combination: 'mean',
    text: 'mean relative humidity over the quarter hour',
  },
  illuminance: {
    quantityKind: 'quantitykind:Illuminance',
    unit: 'unit:LUX',
    combination: 'mean',
    text: 'mean illuminance over the quarter hour',
  },
  rainfall: {
    quantityKind: 'quantitykind:Length',
    unit: 'unit:MilliM',
    combination: 'sum',
    text: 'rain fallen in the quarter hour (depth)',
  },
  windSpeed: {
    quantityKind: 'quantitykind:LinearVelocity',
    unit: 'unit:M-PER-SEC',
    combination: 'mean',
    text: 'mean wind speed over the quarter hour',
  },
  windDirection: {
    quantityKind: 'quantitykind:PlaneAngle',
    unit: 'unit:DEG',
    combination: 'mean',
    text: 'wind direction, degrees from north (an arithmetic mean when aggregated)',
  },
} as const satisfies Record<string, Kind>

export type KindName = keyof typeof KINDS

/** The commodity a kind's amounts are priced as (`Kind.commodity`), if any. */
export const commodityOf = (kind: KindName): Commodity | undefined => (KINDS[kind] as Kind).commodity

/** The kind a meter's metadata names (its `quantity_id` and `unit_id`), if the catalogue knows it. */
export function kindOfMetadata(quantityId: string | null, unitId: string | null): Kind | undefined {
  return Object.values(KINDS).find((k) => k.quantityKind === quantityId && k.unit === unitId)
}
