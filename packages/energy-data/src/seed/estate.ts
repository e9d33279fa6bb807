import type { GroupName } from '../domain/groups.ts'
import { type Environment, noise } from './environment.ts'

/**
 * The demo estate: dataloggers, meters and what each series measures, derived from the
 * environment model. Power in kW, energy in kWh per quarter hour, water in m3 per quarter hour.
 */

export interface DemoDatalogger {
  id: string
  description: string
  notes: string | null
  serial: string
  date_from: string
  date_to: string | null
  ip: string
}

export const DATALOGGERS: DemoDatalogger[] = [
  {
    id: 'DL-AULEP-00',
    description: 'Aule P, quadro generale (primo impianto)',
    notes: 'Sostituito da DL-AULEP-01',
    serial: 'SN-2093-1177',
    date_from: '2014-09-01',
    date_to: '2019-02-28',
    ip: '10.20.1.10',
  },
  {
    id: 'DL-AULEP-01',
    description: 'Aule P, quadro generale',
    notes: null,
    serial: 'SN-4471-0932',
    date_from: '2019-03-01',
    date_to: null,
    ip: '10.20.1.11',
  },
  {
    id: 'DL-CAST-01',
    description: 'Castelfidardo, cabina principale',
    notes: null,
    serial: 'SN-3310-2288',
    date_from: '2017-09-15',
    date_to: null,
    ip: '10.20.2.11',
  },
  {
    id: 'DL-CIT-01',
    description: 'Cittadella, cabina MT',
    notes: null,
    serial: 'SN-3388-0412',
    date_from: '2018-01-10',
    date_to: null,
    ip: '10.20.3.11',
  },
  {
    id: 'DL-EC-01',
    description: 'Energy Center, quadro generale',
    notes: null,
    serial: 'SN-2980-7715',
    date_from: '2016-05-02',
    date_to: null,
    ip: '10.20.4.11',
  },
  {
    id: 'DL-DC-01',
    description: 'Data center 1, sala quadri',
    notes: 'Tre sale: I1, I2, I3',
    serial: 'SN-5120-3349',
    date_from: '2020-02-17',
    date_to: null,
    ip: '10.20.5.11',
  },
  {
    id: 'DL-CF-01',
    description: 'Centrali frigorifere',
    notes: null,
    serial: 'SN-3651-9020',
    date_from: '2018-06-01',
    date_to: null,
    ip: '10.20.6.11',
  },
  {
    id: 'DL-H2O-01',
    description: 'Acquedotto e fontanelle',
    notes: null,
    serial: 'SN-4802-6631',
    date_from: '2019-11-04',
    date_to: null,
    ip: '10.20.7.11',
  },
  {
    id: 'DL-METEO-01',
    description: 'Stazione meteo, tetto Energy Center',
    notes: null,
    serial: 'SN-1974-5108',
    date_from: '2015-04-20',
    date_to: null,
    ip: '10.20.8.11',
  },
]

const ENERGY = {
  type_id: 'brick:Electrical_Energy_Sensor',
  unit_id: 'unit:KiloW-HR',
  quantity_id: 'quantitykind:Energy',
}
const POWER = { type_id: 'brick:Electric_Power_Sensor', unit_id: 'unit:KiloW', quantity_id: 'quantitykind:Power' }
const PV = { type_id: 'brick:PV_Panel', unit_id: 'unit:KiloW', quantity_id: 'quantitykind:Power' }
const WATER = { type_id: 'brick:Water_Meter', unit_id: 'unit:M3', quantity_id: 'quantitykind:Volume' }

export interface DemoMeter {
  id: number
  text: string
  datalogger_id: string
  date_from: string
  date_to?: string
  notes?: string
  type_id: string
  unit_id: string
  quantity_id: string
  /** Which signal it reads, and the factor to its unit (0.25 turns kW into kWh per quarter hour). */
  signal: string
  scale: number
}

export const METERS: DemoMeter[] = [
  {
    id: 860,
    text: 'Quadro generale Aule P',
    datalogger_id: 'DL-AULEP-01',
    date_from: '2019-03-01',
    ...ENERGY,
    signal: 'aulep_load',
    scale: 0.25,
  },
  {
    id: 861,
    text: 'Inverter FV 1 Aule P',
    datalogger_id: 'DL-AULEP-01',
    date_from: '2019-03-01',
    ...PV,
    signal: 'pv_inv_1',
    scale: 1,
  },
  {
    id: 862,
    text: 'Inverter FV 2 Aule P',
    datalogger_id: 'DL-AULEP-01',
    date_from: '2019-03-01',
    ...PV,
    signal: 'pv_inv_2',
    scale: 1,
  },
  {
    id: 863,
    text: 'Rooftop 1 Aule P',
    datalogger_id: 'DL-AULEP-01',
    date_from: '2019-03-01',
    ...POWER,
    signal: 'rooftop_1',
    scale: 1,
  },
  {
    id: 870,
    text: 'Quadro generale Castelfidardo',
    datalogger_id: 'DL-CAST-01',
    date_from: '2017-09-15',
    ...ENERGY,
    signal: 'castelfidardo_load',
    scale: 0.25,
  },
  {
    id: 871,
    text: 'Fotovoltaico Castelfidardo',
    datalogger_id: 'DL-CAST-01',
    date_from: '2017-09-15',
    ...PV,
    signal: 'tot_pv_castelfidardo',
    scale: 1,
  },
  {
    id: 880,
    text: 'Quadro generale Cittadella',
    datalogger_id: 'DL-CIT-01',
    date_from: '2018-01-10',
    ...ENERGY,
    signal: 'cittadella_load',
    scale: 0.25,
  },
  {
    id: 881,
    text: 'Fotovoltaico Cittadella',
    datalogger_id: 'DL-CIT-01',
    date_from: '2018-01-10',
    ...PV,
    signal: 'tot_pv_cit',
    scale: 1,
  },
  {
    id: 890,
    text: 'Quadro generale Energy Center',
    datalogger_id: 'DL-EC-01',
    date_from: '2016-05-02',
    ...ENERGY,
    signal: 'ec_load',
    scale: 0.25,
  },
  {
    id: 891,
    text: 'Fotovoltaico Energy Center',
    datalogger_id: 'DL-EC-01',
    date_from: '2016-05-02',
    ...PV,
    signal: 'tot_pv_ec',
    scale: 1,
  },
  {
    id: 900,
    text: 'Data center 1 totale',
    datalogger_id: 'DL-DC-01',
    date_from: '2020-02-17',
    ...POWER,
    signal: 'tot_dc',
    scale: 1,
  },
  {
    id: 901,
    text: 'Data center 1 carico IT',
    datalogger_id: 'DL-DC-01',
    date_from: '2020-02-17',
    ...POWER,
    signal: 'tot_dc_it',
    scale: 1,
  },
  {
    id: 910,
    text: 'Centrale frigo 1',
    datalogger_id: 'DL-CF-01',
    date_from: '2018-06-01',
    ...POWER,
    signal: 'cf1_tot',
    scale: 1,
  },
  {
    id: 911,
    text: 'Centrale frigo 2',
    datalogger_id: 'DL-CF-01',
    date_from: '2018-06-01',
    ...POWER,
    signal: 'cf2_tot',
    scale: 1,
  },
  {
    id: 912,
    text: 'Centrale frigo 3',
    datalogger_id: 'DL-CF-01',
    date_from: '2018-06-01',
    ...POWER,
    signal: 'cf3_tot',
    scale: 1,
  },
  {
    id: 920,
    text: 'Contatore acqua sede centrale',
    datalogger_id: 'DL-H2O-01',
    date_from: '2019-11-04',
    ...WATER,
    signal: 'tot_sede_centrale',
    scale: 1,
  },
  {
    id: 921,
    text: 'Fontanella aula magna',
    datalogger_id: 'DL-H2O-01',
    date_from: '2019-11-04',
    ...WATER,
    signal: 'tot_font_aula_magna',
    scale: 1,
  },
  {
    id: 922,
    text: 'Fontanella Aule P',
    datalogger_id: 'DL-H2O-01',
    date_from: '2019-11-04',
    ...WATER,
    signal: 'tot_font_aule_p',
    scale: 1,
  },
  {
    id: 930,
    text: 'Temperatura aria stazione meteo',
    datalogger_id: 'DL-METEO-01',
    date_from: '2015-04-20',
    type_id: 'brick:Air_Temperature_Sensor',
    unit_id: 'unit:DEG_C',
    quantity_id: 'quantitykind:Temperature',
    signal: 'air_temperature',
    scale: 1,
  },
  {
    id: 931,
    text: 'Radiazione solare globale',
    datalogger_id: 'DL-METEO-01',
    date_from: '2015-04-20',
    type_id: 'brick:Solar_Radiance_Sensor',
    unit_id: 'unit:W-PER-M2',
    quantity_id: 'quantitykind:Irradiance',
    signal: 'global_solar_radiation',
    scale: 1,
  },
  {
    id: 932,
    text: 'Pressione atmosferica',
    datalogger_id: 'DL-METEO-01',
    date_from: '2015-04-20',
    type_id: 'brick:Pressure_Sensor',
    unit_id: 'unit:HectoPA',
    quantity_id: 'quantitykind:Pressure',
    signal: 'atmospheric_pressure',
    scale: 1,
  },
  {
    id: 933,
    text: 'Colonnine ricarica auto',
    datalogger_id: 'DL-EC-01',
    date_from: '2024-04-15',
    notes: 'Quattro colonnine da 22 kW',
    ...POWER,
    signal: 'cars',
    scale: 1,
  },
]

const clamp01 = (x: number) => Math.min(1, Math.max(0, x))

/**
 * Every signal of the estate for one quarter hour. `q` is the quarter-hour index (epoch ms / 900000),
 * used for per-series jitter so series are not lockstep copies of each other.
 */
export function signalsAt(seed: number, q: number, env: Environment): Record<string, number> {
  let stream = 100
  const jitter = (x: number, amount = 0.03) => x * (1 + (noise(seed, stream++, q) - 0.5) * 2 * amount)
  const day = Math.floor(q / 96)
  const cellTemperature = env.temperature + env.ghi * 0.03
  const efficiency = 0.84 * (1 - 0.004 * (cellTemperature - 25))
  // east- and west-facing plants peak before and after noon
  const east = Math.max(0.2, Math.min(1.6, 1 + (12.5 - env.hour) / 8))
  const west = Math.max(0.2, Math.min(1.6, 1 + (env.hour - 12.5) / 8))
  const pv = (kwp: number, id: number, orientation = 1) => {
    // now and then an inverter trips for a day
    if (noise(seed, 900 + id, day) < 0.006) return 0
    return env.ghi > 0 ? jitter((kwp * env.ghi * efficiency * orientation) / 1000, 0.02) : 0
  }
  const s: Record<string, number> = {}
  s.tot_pv_aule_p_i1 = pv(60, 1)
  s.tot_pv_aule_p_i2 = pv(60, 2)
  s.tot_pv_aule_p = s.tot_pv_aule_p_i1 + s.tot_pv_aule_p_i2
  s.tot_pv_aule_r = pv(40, 3)
  s.tot_pv_castelfidardo = pv(150, 4)
  s.tot_pv_cit = pv(120, 5)
  s.tot_pv_ec_inv1 = pv(25, 6)
  s.tot_pv_ec_inv2 = pv(25, 7)
  s.tot_pv_ec_inv3 = pv(25, 8)
  s.tot_pv_ec_inv4 = pv(25, 9)
  s.tot_pv_ec = s.tot_pv_ec_inv1 + s.tot_pv_ec_inv2 + s.tot_pv_ec_inv3 + s.tot_pv_ec_inv4
  s.tot_pv_i3p_est = pv(45, 10, east)
  s.tot_pv_i3p_ovest = pv(45, 11, west)
  s.tot_pv_i3p = s.tot_pv_i3p_est + s.tot_pv_i3p_ovest
  s.tot_pv = s.tot_pv_aule_p + s.tot_pv_aule_r + s.tot_pv_castelfidardo + s.tot_pv_cit + s.tot_pv_ec + s.tot_pv_i3p

  const occ = env.occupancy
  const T = env.temperature
  const cooling = clamp01((T - 17) / 15) * (0.35 + 0.65 * occ)
  const heating = clamp01((12 - T) / 14) * (0.4 + 0.6 * occ)

  s.atmospheric_pressure = env.pressure
  s.relative_humidity = env.humidity
  s.air_temperature = T
  s.global_solar_radiation = env.ghi
  s.diffuse_solar_radiation = env.diffuse
  s.horizontal_direct_solar_radiation = env.ghi - env.diffuse
  s.direct_solar_radiation = env.sunHeight > 0.03 ? Math.min(1000, (env.ghi - env.diffuse) / env.sunHeight) : 0
  s.illuminance = env.ghi * 112
  s.total_rainfall = env.rain
  s.wind_direction = env.windDirection
  s.wind_speed = env.windSpeed

  s.tot_dc_i1_it = jitter(70 * (1 + 0.06 * occ), 0.01)
  s.tot_dc_i2_it = jitter(55 * (1 + 0.05 * occ), 0.01)
  s.tot_dc_i3_it = jitter(45, 0.015)
  const ventFactor = 0.12 + 0.012 * Math.max(0, T - 10)
  s.tot_dc_i1_vent = jitter(s.tot_dc_i1_it * ventFactor)
  s.tot_dc_i2_vent = jitter(s.tot_dc_i2_it * ventFactor)
  s.tot_dc_i3_vent = jitter(s.tot_dc_i3_it * ventFactor)
  s.tot_dc_i1_cabina = jitter(4)
  s.tot_dc_i1 = s.tot_dc_i1_it + s.tot_dc_i1_vent + s.tot_dc_i1_cabina
  s.tot_dc_i2 = s.tot_dc_i2_it + s.tot_dc_i2_vent
  s.tot_dc_i3 = s.tot_dc_i3_it + s.tot_dc_i3_vent
  s.tot_dc_it = s.tot_dc_i1_it + s.tot_dc_i2_it + s.tot_dc_i3_it
  s.tot_dc_vent = s.tot_dc_i1_vent + s.tot_dc_i2_vent + s.tot_dc_i3_vent
  s.tot_dc_aux = jitter(8 + 2 * occ)
  s.tot_dc_gf = jitter(0.25 * s.tot_dc_it * (1 + 0.03 * Math.max(0, T - 15)))
  s.tot_dc = s.tot_dc_i1 + s.tot_dc_i2 + s.tot_dc_i3 + s.tot_dc_aux + s.tot_dc_gf

  s.cf1_gf3 = jitter(320 * cooling)
  s.cf1_tot = s.cf1_gf3 + jitter(6)
  s.cf2_gf1 = jitter(210 * cooling)
  s.cf2_gf2 = jitter(190 * cooling)
  s.cf2_gf3 = jitter(170 * cooling)
  s.cf2_aux1 = jitter(12 + 20 * cooling)
  s.cf2_aux2 = jitter(8 + 15 * cooling)
  s.cf2_tot = s.cf2_gf1 + s.cf2_gf2 + s.cf2_gf3 + s.cf2_aux1 + s.cf2_aux2
  s.cf3_gf1 = jitter(180 * cooling)
  s.cf3_gf2 = jitter(160 * cooling)
  s.cf3_gf3 = jitter(120 * cooling)
  s.cf3_tot = s.cf3_gf1 + s.cf3_gf2 + s.cf3_gf3 + jitter(5)
  s.castello_nuovo = jitter(5 + 90 * cooling)
  s.cittadella_gf1 = jitter(140 * cooling)
  s.cittadella_gf2 = jitter(125 * cooling)
  s.cittadella_gf3 = jitter(110 * cooling)
  s.cittadella_gf4 = jitter(95 * cooling)
  s.cittadella_gf5 = jitter(80 * cooling)
  s.nodo1_gf3 = jitter(160 * cooling)
  s.nodo1_tot = s.nodo1_gf3 + jitter(10)
  s.energy_center = jitter(12 + 60 * cooling)
  const charging = env.weekday >= 1 && env.weekday <= 5 && env.hour >= 8 && env.hour < 18
  s.cars = charging ? Math.max(0, 88 * occ * noise(seed, stream++, Math.floor(q / 4))) : 0

  const fountain = (factor: number) => jitter(factor * (0.004 + 0.05 * occ * (1 + Math.max(0, T - 20) / 8)), 0.1)
  s.tot_font_aula_magna = fountain(1)
  s.tot_font_aule_p = fountain(0.8)
  s.tot_font_corr_denerg = fountain(0.5)
  s.tot_font_corr_nord = fountain(0.7)
  s.tot_font_corr_sud = fountain(0.6)
  const fountains =
    s.tot_font_aula_magna + s.tot_font_aule_p + s.tot_font_corr_denerg + s.tot_font_corr_nord + s.tot_font_corr_sud
  const irrigation = env.dayOfYear > 120 && env.dayOfYear < 270 && env.hour >= 5 && env.hour < 6 ? 3 : 0
  s.tot_sede_centrale = jitter(0.3 + 4.2 * occ + irrigation, 0.08) + fountains

  s.rooftop_1 = jitter(30 * (cooling + heating * 0.8))
  s.rooftop_2 = jitter(28 * (cooling + heating * 0.8))
  s.rooftop_3 = jitter(26 * (cooling + heating * 0.8))
  s.rooftop_4 = jitter(24 * (cooling + heating * 0.8))
  s.rooftop_5 = jitter(18 * (cooling + heating * 0.8))
  const rooftops = s.rooftop_1 + s.rooftop_2 + s.rooftop_3 + s.rooftop_4 + s.rooftop_5
  s.consumo_aula_1p = jitter(6 + 38 * occ)
  s.pv_inv_1 = s.tot_pv_aule_p_i1
  s.pv_inv_2 = s.tot_pv_aule_p_i2
  s.tot_pv_prod = s.pv_inv_1 + s.pv_inv_2
  s.tot_pv_prod_legacy = s.tot_pv_prod * 0.985
  s.temp_celle_fv = cellTemperature
  s.solarimetro = env.ghi * 1.08
  s.gen_qe_cdz = 5 + rooftops * 0.6
  s.gen_qe_ga = jitter(15 + 20 * occ)
  s.fontana_h2o = s.tot_font_aule_p
  s.aulep_load = 25 + 140 * occ + rooftops + s.gen_qe_ga
  s.surplus_pv = Math.max(0, s.tot_pv_prod - s.aulep_load)

  s.castelfidardo_load = jitter(180 + 950 * occ + 0.3 * (s.cf1_tot + s.cf2_tot) + 40 * heating)
  s.cittadella_load = jitter(120 + 600 * occ + 0.5 * (s.cittadella_gf1 + s.cittadella_gf2) + 25 * heating)
  s.ec_load = jitter(40 + 150 * occ + s.energy_center + s.cars)
  return s
}

/** Which signal stream keeps each wide table's jitter apart (also its gap pattern). */
export const GROUP_STREAMS: Record<GroupName, number> = {
  datacenter_1: 1,
  pv: 2,
  water: 3,
  weather: 4,
  centrali_frigo: 5,
  aulep: 6,
}
