import { type MeterEntry, type MeterId, meterEntry } from './meters.ts'
import { KINDS, type Kind, type KindName } from './quantities.ts'

/**
 * The wide 15-minute tables (`<group>_15m`) and what each of their columns measures, in the
 * contract's column order. A column that mirrors a meter (the same reading, stored twice) names
 * the meter and takes the meter's kind, so the two can never disagree on a unit.
 */

type ColumnEntry =
  | { readonly kind: KindName; readonly text: string }
  | { readonly meter: MeterId; readonly text: string }

const power = (text: string) => ({ kind: 'power', text }) as const
const volume = (text: string) => ({ kind: 'volume', text }) as const
const irradiance = (text: string) => ({ kind: 'irradiance', text }) as const
const mirror = (meter: MeterId, text: string) => ({ meter, text }) as const

interface GroupEntry {
  /** Name of the row schema in the contract. */
  readonly title: string
  readonly summary: string
  readonly columns: Readonly<Record<string, ColumnEntry>>
}

export const GROUPS = {
  datacenter_1: {
    title: 'Datacenter15m',
    summary: 'Data centre 1: total, IT, ventilation and auxiliary power per room',
    columns: {
      tot_dc: mirror(900, 'Data centre 1, whole load'),
      tot_dc_aux: power('Data centre 1, auxiliary services'),
      tot_dc_gf: power('Data centre 1, chiller groups'),
      tot_dc_i1: power('Room I1, whole load (IT, ventilation, switchgear cabin)'),
      tot_dc_i1_cabina: power('Room I1, switchgear cabin'),
      tot_dc_i1_it: power('Room I1, IT load'),
      tot_dc_i1_vent: power('Room I1, ventilation'),
      tot_dc_i2: power('Room I2, whole load (IT and ventilation)'),
      tot_dc_i2_it: power('Room I2, IT load'),
      tot_dc_i2_vent: power('Room I2, ventilation'),
      tot_dc_i3: power('Room I3, whole load (IT and ventilation)'),
      tot_dc_i3_it: power('Room I3, IT load'),
      tot_dc_i3_vent: power('Room I3, ventilation'),
      tot_dc_it: mirror(901, 'Data centre 1, IT load of the three rooms'),
      tot_dc_vent: power('Data centre 1, ventilation of the three rooms'),
    },
  },
  pv: {
    title: 'Pv15m',
    summary: 'Photovoltaic production per plant and inverter',
    columns: {
      tot_pv: power('PV production of the campus (sum of the plants)'),
      tot_pv_aule_p: power('Aule P plant (inverters 1 and 2)'),
      tot_pv_aule_p_i1: mirror(861, 'Aule P plant, inverter 1'),
      tot_pv_aule_p_i2: mirror(862, 'Aule P plant, inverter 2'),
      tot_pv_aule_r: power('Aule R plant'),
      tot_pv_castelfidardo: mirror(871, 'Castelfidardo plant'),
      tot_pv_cit: mirror(881, 'Cittadella plant'),
      tot_pv_ec: mirror(891, 'Energy Center plant (inverters 1 to 4)'),
      tot_pv_ec_inv1: power('Energy Center plant, inverter 1'),
      tot_pv_ec_inv2: power('Energy Center plant, inverter 2'),
      tot_pv_ec_inv3: power('Energy Center plant, inverter 3'),
      tot_pv_ec_inv4: power('Energy Center plant, inverter 4'),
      tot_pv_i3p: power('I3P plant (east and west arrays)'),
      tot_pv_i3p_est: power('I3P plant, east-facing array'),
      tot_pv_i3p_ovest: power('I3P plant, west-facing array'),
    },
  },
  water: {
    title: 'Water15m',
    summary: 'Water use: main site and drinking fountains',
    columns: {
      tot_sede_centrale: mirror(920, 'Main site water meter (the fountains included)'),
      tot_font_aula_magna: mirror(921, 'Drinking fountain, main hall'),
      tot_font_aule_p: mirror(922, 'Drinking fountain, Aule P'),
      tot_font_corr_denerg: volume('Drinking fountain, DENERG corridor'),
      tot_font_corr_nord: volume('Drinking fountain, north corridor'),
      tot_font_corr_sud: volume('Drinking fountain, south corridor'),
    },
  },
  weather: {
    title: 'Weather15m',
    summary: 'Weather station: pressure, humidity, temperature, radiation, illuminance, rain, wind',
    columns: {
      atmospheric_pressure: mirror(932, 'Atmospheric pressure'),
      relative_humidity: { kind: 'humidity', text: 'Relative humidity of the air' },
      air_temperature: mirror(930, 'Air temperature'),
      global_solar_radiation: mirror(931, 'Global irradiance on the horizontal plane'),
      diffuse_solar_radiation: irradiance('Diffuse irradiance on the horizontal plane'),
      direct_solar_radiation: irradiance('Direct normal irradiance'),
      horizontal_direct_solar_radiation: irradiance('Direct irradiance on the horizontal plane'),
      illuminance: { kind: 'illuminance', text: 'Illuminance on the horizontal plane' },
      total_rainfall: { kind: 'rainfall', text: 'Rainfall' },
      wind_direction: { kind: 'windDirection', text: 'Wind direction' },
      wind_speed: { kind: 'windSpeed', text: 'Wind speed' },
    },
  },
  centrali_frigo: {
    title: 'CentraliFrigo15m',
    summary: 'Chiller plants (centrali frigo) and their group feeders',
    columns: {
      cf1_tot: mirror(910, 'Chiller plant 1, whole load'),
      cf1_gf3: power('Chiller plant 1, chiller group 3'),
      cf2_gf3: power('Chiller plant 2, chiller group 3'),
      cf2_gf2: power('Chiller plant 2, chiller group 2'),
      cf2_gf1: power('Chiller plant 2, chiller group 1'),
      cf2_aux1: power('Chiller plant 2, auxiliaries 1'),
      cf2_aux2: power('Chiller plant 2, auxiliaries 2'),
      cf2_tot: mirror(911, 'Chiller plant 2, whole load'),
      cf3_tot: mirror(912, 'Chiller plant 3, whole load'),
      cf3_gf3: power('Chiller plant 3, chiller group 3'),
      cf3_gf2: power('Chiller plant 3, chiller group 2'),
      cf3_gf1: power('Chiller plant 3, chiller group 1'),
      castello_nuovo: power('Castello nuovo chillers'),
      cittadella_gf5: power('Cittadella, chiller group 5'),
      cittadella_gf3: power('Cittadella, chiller group 3'),
      cittadella_gf4: power('Cittadella, chiller group 4'),
      cittadella_gf1: power('Cittadella, chiller group 1'),
      cittadella_gf2: power('Cittadella, chiller group 2'),
      nodo1_gf3: power('Node 1, chiller group 3'),
      nodo1_tot: power('Node 1, whole load'),
      energy_center: power('Energy Center chillers'),
      cars: mirror(933, 'Electric-vehicle chargers'),
    },
  },
  aulep: {
    title: 'AuleP15m',
    summary: 'Aule P building: PV surplus, consumption, rooftop units, fountain',
    columns: {
      surplus_pv: power('PV surplus fed to the grid, metered at the connection point'),
      consumo_aula_1p: power('Aule P building consumption at its main panel (meter 860 keeps it as energy)'),
      tot_pv_prod: power('Aule P PV production (inverters 1 and 2)'),
      tot_pv_prod_legacy: power('Aule P PV production read by the legacy meter'),
      pv_inv_1: mirror(861, 'Aule P PV inverter 1'),
      pv_inv_2: mirror(862, 'Aule P PV inverter 2'),
      temp_celle_fv: { kind: 'temperature', text: 'Temperature of the PV cells' },
      solarimetro: irradiance('Irradiance on the plane of the Aule P modules (pyranometer)'),
      rooftop_1: mirror(863, 'Rooftop unit 1'),
      rooftop_2: power('Rooftop unit 2'),
      rooftop_3: power('Rooftop unit 3'),
      rooftop_4: power('Rooftop unit 4'),
      rooftop_5: power('Rooftop unit 5'),
      gen_qe_cdz: power('Air-conditioning switchboard'),
      gen_qe_ga: power('General services switchboard'),
      fontana_h2o: mirror(922, 'Aule P drinking fountain'),
    },
  },
} as const satisfies Record<string, GroupEntry>

export type GroupName = keyof typeof GROUPS
export type GroupColumn<G extends GroupName> = keyof (typeof GROUPS)[G]['columns'] & string
export const GROUP_NAMES = Object.keys(GROUPS) as GroupName[]

/** The measurement columns of each group, in order. */
export const GROUP_COLUMNS = Object.fromEntries(
  GROUP_NAMES.map((g) => [g, Object.keys(GROUPS[g].columns)]),
) as unknown as { readonly [G in GroupName]: readonly GroupColumn<G>[] }

/** One column of a group, resolved: its kind, unit and the meter it mirrors. */
export interface Series {
  readonly group: GroupName
  readonly column: string
  readonly text: string
  readonly kindName: KindName
  readonly kind: Kind
  readonly meter?: MeterEntry
}

function resolve(group: GroupName, column: string): Series {
  const entry = (GROUPS[group].columns as Record<string, ColumnEntry>)[column]
  if (!entry) throw new Error(`${group}.${column} is not in the catalogue`)
  if ('meter' in entry) {
    const meter = meterEntry(entry.meter)
    if (!meter) throw new Error(`${group}.${column} mirrors meter ${entry.meter}, which is not in the catalogue`)
    return { group, column, text: entry.text, kindName: meter.kind, kind: KINDS[meter.kind], meter }
  }
  return { group, column, text: entry.text, kindName: entry.kind, kind: KINDS[entry.kind] }
}

const SERIES = new Map(
  GROUP_NAMES.flatMap((g) => GROUP_COLUMNS[g].map((c): [string, Series] => [`${g}.${c}`, resolve(g, c)])),
)

export function seriesOf<G extends GroupName>(group: G, column: GroupColumn<G>): Series {
  return SERIES.get(`${group}.${column}`) as Series
}

/** A column named at run time (configuration, a report's list): the catalogue must know it. */
export function seriesNamed(group: GroupName, column: string): Series {
  const series = SERIES.get(`${group}.${column}`)
  if (!series) throw new Error(`${group}.${column} is not in the catalogue`)
  return series
}

/** The columns of a group, in order. */
export function groupSeries(group: GroupName): readonly Series[] {
  return GROUP_COLUMNS[group].map((c) => SERIES.get(`${group}.${c}`) as Series)
}

/** The columns of a group that add up over time (amounts: volume, rain): each has a bucket total, `<column>_total`. */
export function totalledSeries(group: GroupName): readonly Series[] {
  return groupSeries(group).filter((s) => s.kind.combination === 'sum')
}

/** Every column of every group, group by group in order. */
export const ALL_SERIES: readonly Series[] = [...SERIES.values()]

/** Every column of every group that mirrors a meter. */
export const MIRRORS: readonly Series[] = ALL_SERIES.filter((s) => s.meter !== undefined)
