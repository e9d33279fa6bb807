import { seriesOf } from '../catalogue/groups.ts'
import { convertQuarter, type UnitId, unitSymbol } from '../catalogue/quantities.ts'
import { type Language, PLANT_NAMES } from '../charts/i18n.ts'
import { formatIso, quartersBetween } from '../domain/time.ts'
import type { DayWindow } from '../domain/window.ts'
import type { PricedDays } from '../repositories/costs.ts'
import type { BalanceTotals, ColumnSummary, DailyTotals } from '../repositories/views.ts'
import {
  type Block,
  coverageLine,
  dayValues,
  heading,
  list,
  numbers,
  paragraph,
  pricedVersions,
  table,
  windowLine,
} from './document.ts'

const PV_PLANTS = Object.keys(PLANT_NAMES) as Array<keyof typeof PLANT_NAMES>
export const PV_COLUMNS = ['tot_pv', ...PV_PLANTS] as const
type PvColumn = (typeof PV_COLUMNS)[number]

/** The units the report speaks in. */
const ENERGY: UnitId = 'unit:KiloW-HR'
const POWER: UnitId = 'unit:KiloW'
const IRRADIATION: UnitId = 'unit:KiloW-HR-PER-M2'

const TEXT = {
  it: {
    title: 'Rapporto fotovoltaico',
    units:
      'Potenze in kW: la media di un quarto d’ora, come misurata. Energie in kWh: la somma di kW x 0,25 h sui ' +
      'quarti d’ora misurati.',
    production: 'Produzione',
    total: 'Produzione totale',
    totalHow: (n: number) => `tot_pv: somma di kW x 0,25 h sui suoi ${n} quarti d’ora misurati`,
    peak: 'Potenza di picco',
    peakAt: 'nel quarto d’ora che inizia',
    peakHow: 'la media più alta di un quarto d’ora di tot_pv',
    irradiation: 'Irraggiamento globale sul piano orizzontale',
    irradiationHow: (n: number) =>
      `stazione meteo, global_solar_radiation: somma di W/m² x 0,25 h / 1000 sui suoi ${n} quarti d’ora misurati`,
    plantColumns: ['Impianto', 'Energia (kWh)', 'Quota', 'Picco (kW)', 'Picco il', 'Quarti'],
    plantNote:
      'Energia e picco di ogni impianto come per il totale; quota: energia dell’impianto / produzione totale. ' +
      'Un impianto senza dati in quarti d’ora in cui il totale ne ha porta le quote sotto il 100 %.',
    balance: 'Bilancio energetico dell’edificio Aule P',
    noBalance: 'Nessun quarto d’ora con produzione e consumo in questo intervallo.',
    balanceQuarters: 'Quarti d’ora con produzione e consumo',
    balanceHow: (n: number) =>
      `Dalla tabella aulep, quarto d’ora per quarto d’ora, sui ${n} quarti d’ora in cui produzione (tot_pv_prod) e ` +
      'consumo (consumo_aula_1p) sono entrambi misurati; ogni energia è la somma di kW x 0,25 h. Autoconsumato = ' +
      'min(produzione, consumo); eccedenza = produzione - autoconsumato; prelievo = consumo - autoconsumato, così ' +
      'produzione = autoconsumato + eccedenza e consumo = autoconsumato + prelievo. La colonna surplus_pv ' +
      '(eccedenza misurata al punto di connessione) non è usata: il bilancio resta uno solo.',
    pv: 'Produzione fotovoltaica',
    consumption: 'Consumo',
    selfConsumed: 'Fotovoltaico autoconsumato',
    surplus: 'Eccedenza fotovoltaica immessa in rete',
    grid: 'Prelievo dalla rete',
    selfConsumption: 'Autoconsumo (autoconsumato / prodotto)',
    selfSufficiency: 'Autosufficienza (autoconsumato / consumo)',
    twoProductions: (plant: string, plantQuarters: number, balance: string, balanceQuarters: number) =>
      `La produzione Aule P della tabella degli impianti (${plant} kWh, tot_pv_aule_p del gruppo pv, ` +
      `${plantQuarters} quarti d’ora) e quella del bilancio (${balance} kWh, tot_pv_prod del gruppo aulep, ` +
      `${balanceQuarters} quarti d’ora) leggono gli stessi due inverter da due tabelle: differiscono solo per i ` +
      'quarti d’ora che una delle due non ha.',
    byDay: 'Per giorno',
    value: 'Valore dell’energia prodotta',
    valueHow: (versions: string) =>
      `tot_pv: somma di kW x 0,25 h x il prezzo dell’elettricità in vigore in ogni quarto d’ora (tariffe: ${versions}); ` +
      'n/d se un quarto d’ora misurato non ha tariffa',
    dayValue: (currency: string) => `Valore (${currency})`,
    dayColumns: ['Giorno', 'Quarti', 'Totale (kWh)'],
    dayNote: 'Energia per giorno locale in kWh: somma di kW x 0,25 h sui quarti d’ora misurati del giorno.',
    noData: 'Nessun dato in questo intervallo.',
  },
  en: {
    title: 'Photovoltaic report',
    units:
      'Powers in kW: the mean of a quarter hour, as measured. Energies in kWh: the sum of kW x 0.25 h over the ' +
      'measured quarter hours.',
    production: 'Production',
    total: 'Total production',
    totalHow: (n: number) => `tot_pv: sum of kW x 0.25 h over its ${n} measured quarter hours`,
    peak: 'Peak power',
    peakAt: 'in the quarter hour starting',
    peakHow: 'the largest quarter-hour mean of tot_pv',
    irradiation: 'Global irradiation on the horizontal plane',
    irradiationHow: (n: number) =>
      `weather station, global_solar_radiation: sum of W/m² x 0.25 h / 1000 over its ${n} measured quarter hours`,
    plantColumns: ['Plant', 'Energy (kWh)', 'Share', 'Peak (kW)', 'Peak at', 'Quarters'],
    plantNote:
      'Energy and peak of each plant as for the total; share: energy of the plant / total production. A plant ' +
      'missing quarter hours the total holds makes the shares add up to less than 100 %.',
    balance: 'Energy balance of the Aule P building',
    noBalance: 'No quarter hour with both production and consumption in this range.',
    balanceQuarters: 'Quarter hours with production and consumption',
    balanceHow: (n: number) =>
      `From the aulep table, quarter hour by quarter hour, over the ${n} quarter hours in which production ` +
      '(tot_pv_prod) and consumption (consumo_aula_1p) are both measured; each energy is a sum of kW x 0.25 h. ' +
      'Used on site = min(production, consumption); surplus = production - used on site; grid withdrawal = ' +
      'consumption - used on site, so production = used on site + surplus and consumption = used on site + grid ' +
      'withdrawal. The surplus_pv column (the surplus metered at the connection point) is not used: the balance ' +
      'stays one.',
    pv: 'PV production',
    consumption: 'Consumption',
    selfConsumed: 'PV used on site',
    surplus: 'PV surplus fed to the grid',
    grid: 'Grid withdrawal',
    selfConsumption: 'Self-consumption (PV used on site / PV production)',
    selfSufficiency: 'Self-sufficiency (PV used on site / consumption)',
    twoProductions: (plant: string, plantQuarters: number, balance: string, balanceQuarters: number) =>
      `The Aule P production of the plant table (${plant} kWh, tot_pv_aule_p of the pv group, ${plantQuarters} ` +
      `quarter hours) and that of the balance (${balance} kWh, tot_pv_prod of the aulep group, ${balanceQuarters} ` +
      'quarter hours) read the same two inverters from two tables: they differ only by the quarter hours one of ' +
      'the two lacks.',
    byDay: 'By day',
    value: 'Value of the energy produced',
    valueHow: (versions: string) =>
      `tot_pv: sum of kW x 0.25 h x the electricity price in force at each quarter hour (tariffs: ${versions}); ` +
      'n/a when a measured quarter hour has no tariff',
    dayValue: (currency: string) => `Value (${currency})`,
    dayColumns: ['Day', 'Quarters', 'Total (kWh)'],
    dayNote: 'Energy per local day in kWh: sum of kW x 0.25 h over the measured quarter hours of the day.',
    noData: 'No data in this range.',
  },
} as const

interface PvReportInput {
  window: DayWindow
  quarters: number
  summaries: Record<PvColumn, ColumnSummary>
  days: Array<DailyTotals<PvColumn>>
  balance: BalanceTotals
  radiation: ColumnSummary
  /** tot_pv's energy priced per day at the tariffs in force. */
  value: PricedDays
  lang: Language
}

/** Photovoltaic production per plant, day by day, and the energy balance of the Aule P building. */
export function pvReport({
  window,
  quarters,
  summaries,
  days,
  balance,
  radiation,
  value,
  lang,
}: PvReportInput): Block[] {
  const t = TEXT[lang]
  const { num, percent, missing: na } = numbers(lang)
  const { zone } = window
  const values = dayValues(value)
  const iso = (at: number | null) => (at === null ? na : formatIso(at, zone))
  const energy = (c: PvColumn, sum: number | null) => convertQuarter(sum, seriesOf('pv', c).kind.unit, ENERGY)
  const power = (c: PvColumn, v: number | null) => convertQuarter(v, seriesOf('pv', c).kind.unit, POWER)
  const aulep = (c: 'tot_pv_prod' | 'consumo_aula_1p', sum: number | null) =>
    convertQuarter(sum, seriesOf('aulep', c).kind.unit, ENERGY)
  // the four balance sums are of kW like production and consumption
  const balanceEnergy = (sum: number | null) => aulep('tot_pv_prod', sum)
  const total = summaries.tot_pv
  const totalEnergy = energy('tot_pv', total.sum)
  const irradiation = convertQuarter(
    radiation.sum,
    seriesOf('weather', 'global_solar_radiation').kind.unit,
    IRRADIATION,
  )
  const production = aulep('tot_pv_prod', balance.production)
  const consumption = aulep('consumo_aula_1p', balance.consumption)
  const selfConsumed = balanceEnergy(balance.selfConsumed)
  const aulePlant = summaries.tot_pv_aule_p
  return [
    heading(1, t.title),
    paragraph(`${windowLine(window.from, window.to, zone, lang)} ${t.units}`),
    coverageLine(quarters, quartersBetween(window.from, window.to), lang),
    heading(2, t.production),
    list([
      `${t.total}: ${num(totalEnergy, 2)} ${unitSymbol(ENERGY)} (${t.totalHow(total.count)})`,
      `${t.peak}: ${num(power('tot_pv', total.max), 2)} ${unitSymbol(POWER)} ${t.peakAt} ${iso(total.maxAt)} (${t.peakHow})`,
      `${t.irradiation}: ${num(irradiation, 2)} ${unitSymbol(IRRADIATION)} (${t.irradiationHow(radiation.count)})`,
      `${t.value}: ${num(value.total, 2)} ${value.currency ?? ''}`.trimEnd() +
        ` (${t.valueHow(pricedVersions(value, na))})`,
    ]),
    table(
      [...t.plantColumns],
      PV_PLANTS.map((p) => {
        const s = summaries[p]
        const e = energy(p, s.sum)
        return [
          PLANT_NAMES[p][lang],
          num(e, 2),
          percent(e, totalEnergy),
          num(power(p, s.max), 2),
          iso(s.maxAt),
          String(s.count),
        ]
      }),
    ),
    paragraph(t.plantNote),
    heading(2, t.balance),
    ...(balance.quarters === 0
      ? [paragraph(t.noBalance)]
      : [
          paragraph(t.balanceHow(balance.quarters)),
          list([
            `${t.balanceQuarters}: ${balance.quarters}`,
            `${t.pv}: ${num(production, 2)} kWh`,
            `${t.consumption}: ${num(consumption, 2)} kWh`,
            `${t.selfConsumed}: ${num(selfConsumed, 2)} kWh`,
            `${t.surplus}: ${num(balanceEnergy(balance.surplus), 2)} kWh`,
            `${t.grid}: ${num(balanceEnergy(balance.gridWithdrawal), 2)} kWh`,
            `${t.selfConsumption}: ${percent(selfConsumed, production)}`,
            `${t.selfSufficiency}: ${percent(selfConsumed, consumption)}`,
          ]),
          paragraph(
            t.twoProductions(
              num(energy('tot_pv_aule_p', aulePlant.sum), 2),
              aulePlant.count,
              num(production, 2),
              balance.quarters,
            ),
          ),
        ]),
    heading(2, t.byDay),
    ...(days.length === 0
      ? [paragraph(t.noData)]
      : [
          table(
            [
              ...t.dayColumns,
              ...PV_PLANTS.map((p) => `${PLANT_NAMES[p][lang]} (kWh)`),
              t.dayValue(value.currency ?? na),
            ],
            days.map((d) => [
              d.day,
              String(d.quarters),
              num(energy('tot_pv', d.sums.tot_pv), 2),
              ...PV_PLANTS.map((p) => num(energy(p, d.sums[p]), 2)),
              num(values.get(d.day) ?? null, 2),
            ]),
          ),
          paragraph(t.dayNote),
        ]),
  ]
}
