import { type Language, PLANT_NAMES } from '../charts/i18n.ts'
import { formatIso } from '../domain/time.ts'
import type { DayWindow } from '../domain/window.ts'
import type { BalanceTotals, ColumnSummary, DailyTotals } from '../repositories/views.ts'
import { type Block, heading, list, numbers, paragraph, table } from './document.ts'
import { expectedQuarters, windowLine } from './meter-report.ts'

export const PV_PLANTS = Object.keys(PLANT_NAMES) as Array<keyof typeof PLANT_NAMES>
export const PV_COLUMNS = ['tot_pv', ...PV_PLANTS] as const
export type PvColumn = (typeof PV_COLUMNS)[number]

/** kWh in a quarter hour -> mean kW over it. */
const KW = 4
/** Mean W/m² over a quarter hour -> kWh/m² in it. */
const KWH_PER_M2 = 0.25 / 1000

const TEXT = {
  it: {
    title: 'Rapporto fotovoltaico',
    units: 'Energia in kWh; la potenza è la media in kW di un quarto d’ora (kWh nel quarto d’ora x 4).',
    production: 'Produzione',
    quarters: 'Quarti d’ora con dati',
    of: 'su',
    total: 'Produzione totale',
    peak: 'Potenza di picco',
    peakAt: 'nel quarto d’ora che inizia',
    irradiation: 'Irraggiamento globale sul piano orizzontale',
    plantColumns: ['Impianto', 'Energia (kWh)', 'Quota', 'Picco (kW)', 'Picco il'],
    balance: 'Bilancio energetico dell’edificio Aule P',
    noBalance: 'Nessun quarto d’ora con produzione e consumo in questo intervallo.',
    balanceQuarters: 'Quarti d’ora con produzione e consumo',
    pv: 'Produzione fotovoltaica',
    consumption: 'Consumo',
    selfConsumed: 'Fotovoltaico autoconsumato',
    surplus: 'Eccedenza fotovoltaica immessa in rete',
    metered: 'eccedenza misurata',
    grid: 'Prelievo dalla rete',
    selfConsumption: 'Autoconsumo (autoconsumato / prodotto)',
    selfSufficiency: 'Autosufficienza (autoconsumato / consumo)',
    byDay: 'Per giorno',
    dayColumns: ['Giorno', 'Totale (kWh)'],
    noData: 'Nessun dato in questo intervallo.',
  },
  en: {
    title: 'Photovoltaic report',
    units: 'Energy in kWh; power is the mean kW of a quarter hour (kWh in it x 4).',
    production: 'Production',
    quarters: 'Quarter hours with data',
    of: 'of',
    total: 'Total production',
    peak: 'Peak power',
    peakAt: 'in the quarter hour starting',
    irradiation: 'Global irradiation on the horizontal plane',
    plantColumns: ['Plant', 'Energy (kWh)', 'Share', 'Peak (kW)', 'Peak at'],
    balance: 'Energy balance of the Aule P building',
    noBalance: 'No quarter hour with both production and consumption in this range.',
    balanceQuarters: 'Quarter hours with production and consumption',
    pv: 'PV production',
    consumption: 'Consumption',
    selfConsumed: 'PV used on site',
    surplus: 'PV surplus fed to the grid',
    metered: 'metered surplus',
    grid: 'Grid withdrawal',
    selfConsumption: 'Self-consumption (PV used on site / PV production)',
    selfSufficiency: 'Self-sufficiency (PV used on site / consumption)',
    byDay: 'By day',
    dayColumns: ['Day', 'Total (kWh)'],
    noData: 'No data in this range.',
  },
} as const

export interface PvReportInput {
  window: DayWindow
  quarters: number
  summaries: Record<PvColumn, ColumnSummary>
  days: Array<DailyTotals<PvColumn>>
  balance: BalanceTotals
  radiation: ColumnSummary
  lang: Language
}

/** Photovoltaic production per plant, day by day, and the energy balance of the Aule P building. */
export function pvReport({ window, quarters, summaries, days, balance, radiation, lang }: PvReportInput): Block[] {
  const t = TEXT[lang]
  const { num, percent, missing: na } = numbers(lang)
  const { zone } = window
  const iso = (at: number | null) => (at === null ? na : formatIso(at, zone))
  const expected = expectedQuarters(window.from, window.to)
  const total = summaries.tot_pv
  const kw = (v: number | null) => (v === null ? null : v * KW)
  const irradiation = radiation.sum === null ? null : radiation.sum * KWH_PER_M2
  return [
    heading(1, t.title),
    paragraph(`${windowLine(window.from, window.to, zone, lang)} ${t.units}`),
    heading(2, t.production),
    list([
      `${t.quarters}: ${quarters} ${t.of} ${expected} (${percent(quarters, expected)})`,
      `${t.total}: ${num(total.sum, 2)} kWh`,
      `${t.peak}: ${num(kw(total.max), 2)} kW ${t.peakAt} ${iso(total.maxAt)}`,
      `${t.irradiation}: ${num(irradiation, 2)} kWh/m²`,
    ]),
    table(
      [...t.plantColumns],
      PV_PLANTS.map((p) => {
        const s = summaries[p]
        return [PLANT_NAMES[p][lang], num(s.sum, 2), percent(s.sum, total.sum), num(kw(s.max), 2), iso(s.maxAt)]
      }),
    ),
    heading(2, t.balance),
    balance.quarters === 0
      ? paragraph(t.noBalance)
      : list([
          `${t.balanceQuarters}: ${balance.quarters}`,
          `${t.pv}: ${num(balance.production, 2)} kWh`,
          `${t.consumption}: ${num(balance.consumption, 2)} kWh`,
          `${t.selfConsumed}: ${num(balance.selfConsumed, 2)} kWh`,
          `${t.surplus}: ${num(balance.surplus, 2)} kWh (${t.metered}: ${num(balance.measuredSurplus, 2)} kWh)`,
          `${t.grid}: ${num(balance.gridWithdrawal, 2)} kWh`,
          `${t.selfConsumption}: ${percent(balance.selfConsumed, balance.production)}`,
          `${t.selfSufficiency}: ${percent(balance.selfConsumed, balance.consumption)}`,
        ]),
    heading(2, t.byDay),
    days.length === 0
      ? paragraph(t.noData)
      : table(
          [...t.dayColumns, ...PV_PLANTS.map((p) => PLANT_NAMES[p][lang])],
          days.map((d) => [d.day, num(d.sums.tot_pv, 2), ...PV_PLANTS.map((p) => num(d.sums[p], 2))]),
        ),
  ]
}
