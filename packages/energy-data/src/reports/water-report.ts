import { FOUNTAIN_NAMES } from '../charts/i18n.ts'
import type { ColumnSummary, DailyTotals } from '../repositories/views.ts'
import { type Block, heading, list, num, paragraph, percent, table } from './document.ts'
import { expectedQuarters } from './meter-report.ts'
import type { ReportWindow } from './report-window.ts'
import { formatIso } from './zoned-time.ts'

/** Water meters in report order: the main meter, then the drinking fountains. */
export const WATER_METERS = [
  'tot_sede_centrale',
  'tot_font_aula_magna',
  'tot_font_aule_p',
  'tot_font_corr_denerg',
  'tot_font_corr_nord',
  'tot_font_corr_sud',
] as const
export type WaterMeter = (typeof WATER_METERS)[number]

export const WATER_NAMES: Record<WaterMeter, string> = {
  tot_sede_centrale: 'Main site (sede centrale)',
  ...Object.fromEntries(Object.entries(FOUNTAIN_NAMES).map(([k, v]) => [k, `Fountain ${v.en}`])),
} as Record<WaterMeter, string>

/** m³ in a quarter hour -> mean m³/h over it. */
const PER_HOUR = 4

export interface WaterReportInput {
  window: ReportWindow
  quarters: number
  summaries: Record<WaterMeter, ColumnSummary>
  days: Array<DailyTotals<WaterMeter>>
}

/** Water use per meter: volumes, peaks, the night baseline (a leak shows there first), and day by day. */
export function waterReport({ window, quarters, summaries, days }: WaterReportInput): Block[] {
  const { zone } = window
  const iso = (t: number | null) => (t === null ? 'n/a' : formatIso(t, zone))
  const expected = expectedQuarters(window.from, window.to)
  const main = summaries.tot_sede_centrale
  const fountains = WATER_METERS.slice(1).map((m) => summaries[m].sum)
  const fountainTotal = fountains.some((v) => v !== null) ? fountains.reduce<number>((a, v) => a + (v ?? 0), 0) : null
  const perHour = (v: number | null) => (v === null ? null : v * PER_HOUR)
  return [
    heading(1, 'Water report'),
    paragraph(`From ${iso(window.from)} to ${iso(window.to)} (inclusive), times in ${zone}. Volumes in m³.`),
    heading(2, 'Summary'),
    list([
      `Quarter hours with data: ${quarters} of ${expected} (${percent(quarters, expected)})`,
      `Main site total: ${num(main.sum, 3)} m³`,
      `Drinking fountains total: ${num(fountainTotal, 3)} m³ (${percent(fountainTotal, main.sum)} of the main site)`,
      `Main site peak: ${num(perHour(main.max), 3)} m³/h in the quarter hour starting ${iso(main.maxAt)}`,
      `Main site night baseline (02:00-04:00): ${num(perHour(main.nightMean), 3)} m³/h, ${percent(
        main.nightMean,
        main.mean,
      )} of the mean flow`,
    ]),
    heading(2, 'By meter'),
    table(
      ['Meter', 'Total (m³)', 'Mean flow (m³/h)', 'Peak flow (m³/h)', 'Peak at', 'Night baseline (m³/h)', 'Quarters'],
      WATER_METERS.map((m) => {
        const s = summaries[m]
        return [
          WATER_NAMES[m],
          num(s.sum, 3),
          num(perHour(s.mean), 3),
          num(perHour(s.max), 3),
          iso(s.maxAt),
          num(perHour(s.nightMean), 3),
          String(s.count),
        ]
      }),
    ),
    heading(2, 'By day'),
    days.length === 0
      ? paragraph('No data in this range.')
      : table(
          ['Day', 'Quarters', ...WATER_METERS.map((m) => WATER_NAMES[m])],
          days.map((d) => [d.day, String(d.quarters), ...WATER_METERS.map((m) => num(d.sums[m], 3))]),
        ),
  ]
}
