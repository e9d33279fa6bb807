import { ALL_SERIES, type GroupName, MIRRORS } from '../catalogue/groups.ts'
import type { MeterEntry } from '../catalogue/meters.ts'
import { conversionFactor, KINDS, QUARTER_SECONDS, type UnitId } from '../catalogue/quantities.ts'
import { type Environment, noise } from './environment.ts'

/**
 * The demo estate: dataloggers, and the signals of every series derived from the environment
 * model, each in the unit the series catalogue gives it (meters and their units come from there).
 */

interface DemoDatalogger {
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

/** Load signals no group column holds (mean kW): what the main-panel energy meters of the campus read. */
const LOAD_SIGNALS = ['castelfidardo_load', 'cittadella_load', 'ec_load'] as const
const MAIN_PANELS: Partial<Record<number, string>> = {
  860: 'consumo_aula_1p',
  870: 'castelfidardo_load',
  880: 'cittadella_load',
  890: 'ec_load',
}

const SIGNAL_UNITS = new Map<string, UnitId>([
  ...ALL_SERIES.map((s): [string, UnitId] => [s.column, s.kind.unit]),
  ...LOAD_SIGNALS.map((signal): [string, UnitId] => [signal, 'unit:KiloW']),
])

/**
 * The signal a meter reads and the factor from the signal's unit to the meter's: a meter that a
 * group column mirrors reads that column's signal as it is; a main-panel energy meter accumulates
 * its building's load over the quarter hour.
 */
export function meterSignal(meter: MeterEntry): { signal: string; factor: number } {
  const signal = MIRRORS.find((s) => s.meter?.id === meter.id)?.column ?? MAIN_PANELS[meter.id]
  const unit = signal === undefined ? undefined : SIGNAL_UNITS.get(signal)
  if (signal === undefined || unit === undefined) throw new Error(`the demo estate has no signal for meter ${meter.id}`)
  return { signal, factor: conversionFactor(unit, KINDS[meter.kind].unit, QUARTER_SECONDS) }
}

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
  // each jittered series draws its own noise stream in this order; this slot stays taken so the
  // series after it keep the values they always had
  stream++
  s.pv_inv_1 = s.tot_pv_aule_p_i1
  s.pv_inv_2 = s.tot_pv_aule_p_i2
  s.tot_pv_prod = s.pv_inv_1 + s.pv_inv_2
  s.tot_pv_prod_legacy = s.tot_pv_prod * 0.985
  s.temp_celle_fv = cellTemperature
  s.solarimetro = env.ghi * 1.08
  s.gen_qe_cdz = 5 + rooftops * 0.6
  s.gen_qe_ga = jitter(15 + 20 * occ)
  s.fontana_h2o = s.tot_font_aule_p
  // the building's main panel: lighting and sockets, the rooftop units and general services
  s.consumo_aula_1p = 25 + 140 * occ + rooftops + s.gen_qe_ga
  s.surplus_pv = Math.max(0, s.tot_pv_prod - s.consumo_aula_1p)

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
