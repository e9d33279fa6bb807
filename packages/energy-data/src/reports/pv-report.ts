import { PLANT_NAMES } from '../charts/i18n.ts'
import type { BalanceTotals, ColumnSummary, DailyTotals } from '../repositories/views.ts'
import { type Block, heading, list, num, paragraph, percent, table } from './document.ts'
import { expectedQuarters } from './meter-report.ts'
import type { ReportWindow } from './report-window.ts'
import { formatIso } from './zoned-time.ts'

export const PV_PLANTS = Object.keys(PLANT_NAMES) as Array<keyof typeof PLANT_NAMES>
export const PV_COLUMNS = ['tot_pv', ...PV_PLANTS] as const
export type PvColumn = (typeof PV_COLUMNS)[number]

/** kWh in a quarter hour -> mean kW over it. */
const KW = 4
/** Mean W/m² over a quarter hour -> kWh/m² in it. */
const KWH_PER_M2 = 0.25 / 1000

export interface PvReportInput {
  window: ReportWindow
  quarters: number
  summaries: Record<PvColumn, ColumnSummary>
  days: Array<DailyTotals<PvColumn>>
  balance: BalanceTotals
  radiation: ColumnSummary
}

/** Photovoltaic production per plant, day by day, and the energy balance of the Aule P building. */
export function pvReport({ window, quarters, summaries, days, balance, radiation }: PvReportInput): Block[] {
  const { zone } = window
  const iso = (t: number | null) => (t === null ? 'n/a' : formatIso(t, zone))
  const expected = expectedQuarters(window.from, window.to)
  const total = summaries.tot_pv
  const kw = (v: number | null) => (v === null ? null : v * KW)
  const irradiation = radiation.sum === null ? null : radiation.sum * KWH_PER_M2
  return [
    heading(1, 'Photovoltaic report'),
    paragraph(
      `From ${iso(window.from)} to ${iso(window.to)} (inclusive), times in ${zone}. ` +
        'Energy in kWh; power is the mean kW of a quarter hour (kWh in it x 4).',
    ),
    heading(2, 'Production'),
    list([
      `Quarter hours with data: ${quarters} of ${expected} (${percent(quarters, expected)})`,
      `Total production: ${num(total.sum, 2)} kWh`,
      `Peak power: ${num(kw(total.max), 2)} kW in the quarter hour starting ${iso(total.maxAt)}`,
      `Global irradiation on the horizontal plane: ${num(irradiation, 2)} kWh/m²`,
    ]),
    table(
      ['Plant', 'Energy (kWh)', 'Share', 'Peak (kW)', 'Peak at'],
      PV_PLANTS.map((p) => {
        const s = summaries[p]
        return [PLANT_NAMES[p].en, num(s.sum, 2), percent(s.sum, total.sum), num(kw(s.max), 2), iso(s.maxAt)]
      }),
    ),
    heading(2, 'Energy balance of the Aule P building'),
    balance.quarters === 0
      ? paragraph('No quarter hour with both production and consumption in this range.')
      : list([
          `Quarter hours with production and consumption: ${balance.quarters}`,
          `PV production: ${num(balance.production, 2)} kWh`,
          `Consumption: ${num(balance.consumption, 2)} kWh`,
          `PV used on site: ${num(balance.selfConsumed, 2)} kWh`,
          `PV surplus fed to the grid: ${num(balance.surplus, 2)} kWh (metered surplus: ${num(
            balance.measuredSurplus,
            2,
          )} kWh)`,
          `Grid withdrawal: ${num(balance.gridWithdrawal, 2)} kWh`,
          `Self-consumption (PV used on site / PV production): ${percent(balance.selfConsumed, balance.production)}`,
          `Self-sufficiency (PV used on site / consumption): ${percent(balance.selfConsumed, balance.consumption)}`,
        ]),
    heading(2, 'By day'),
    days.length === 0
      ? paragraph('No data in this range.')
      : table(
          ['Day', 'Total (kWh)', ...PV_PLANTS.map((p) => PLANT_NAMES[p].en)],
          days.map((d) => [d.day, num(d.sums.tot_pv, 2), ...PV_PLANTS.map((p) => num(d.sums[p], 2))]),
        ),
  ]
}
