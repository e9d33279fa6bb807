import { FOUNTAIN_NAMES, type Language } from '../charts/i18n.ts'
import { formatIso } from '../domain/time.ts'
import type { DayWindow } from '../domain/window.ts'
import type { ColumnSummary, DailyTotals } from '../repositories/views.ts'
import { type Block, heading, list, numbers, paragraph, table } from './document.ts'
import { expectedQuarters, windowLine } from './meter-report.ts'

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

const fountainNames = (lang: Language, prefix: string) =>
  Object.fromEntries(Object.entries(FOUNTAIN_NAMES).map(([k, v]) => [k, `${prefix} ${v[lang]}`]))

export const WATER_NAMES: Record<Language, Record<WaterMeter, string>> = {
  it: { tot_sede_centrale: 'Sede centrale', ...fountainNames('it', 'Fontanella') } as Record<WaterMeter, string>,
  en: { tot_sede_centrale: 'Main site', ...fountainNames('en', 'Fountain') } as Record<WaterMeter, string>,
}

const TEXT = {
  it: {
    title: 'Rapporto acqua',
    units: 'Volumi in m³, portate in m³/h.',
    summary: 'Sintesi',
    quarters: 'Quarti d’ora con dati',
    of: 'su',
    mainTotal: 'Totale sede centrale',
    fountainsTotal: 'Totale fontanelle',
    ofMain: 'della sede centrale',
    peak: 'Picco sede centrale',
    peakAt: 'nel quarto d’ora che inizia',
    night: 'Portata notturna di base della sede centrale (02:00-04:00)',
    ofMean: 'della portata media',
    byMeter: 'Per contatore',
    meterColumns: [
      'Contatore',
      'Totale (m³)',
      'Portata media',
      'Portata di picco',
      'Picco il',
      'Base notturna',
      'Quarti',
    ],
    byDay: 'Per giorno',
    dayColumns: ['Giorno', 'Quarti'],
    noData: 'Nessun dato in questo intervallo.',
  },
  en: {
    title: 'Water report',
    units: 'Volumes in m³, flows in m³/h.',
    summary: 'Summary',
    quarters: 'Quarter hours with data',
    of: 'of',
    mainTotal: 'Main site total',
    fountainsTotal: 'Drinking fountains total',
    ofMain: 'of the main site',
    peak: 'Main site peak',
    peakAt: 'in the quarter hour starting',
    night: 'Main site night baseline (02:00-04:00)',
    ofMean: 'of the mean flow',
    byMeter: 'By meter',
    meterColumns: ['Meter', 'Total (m³)', 'Mean flow', 'Peak flow', 'Peak at', 'Night baseline', 'Quarters'],
    byDay: 'By day',
    dayColumns: ['Day', 'Quarters'],
    noData: 'No data in this range.',
  },
} as const

/** m³ in a quarter hour -> mean m³/h over it. */
const PER_HOUR = 4

export interface WaterReportInput {
  window: DayWindow
  quarters: number
  summaries: Record<WaterMeter, ColumnSummary>
  days: Array<DailyTotals<WaterMeter>>
  lang: Language
}

/** Water use per meter: volumes, peaks, the night baseline (a leak shows there first), and day by day. */
export function waterReport({ window, quarters, summaries, days, lang }: WaterReportInput): Block[] {
  const t = TEXT[lang]
  const names = WATER_NAMES[lang]
  const { num, percent, missing: na } = numbers(lang)
  const { zone } = window
  const iso = (at: number | null) => (at === null ? na : formatIso(at, zone))
  const expected = expectedQuarters(window.from, window.to)
  const main = summaries.tot_sede_centrale
  const fountains = WATER_METERS.slice(1).map((m) => summaries[m].sum)
  const fountainTotal = fountains.some((v) => v !== null) ? fountains.reduce<number>((a, v) => a + (v ?? 0), 0) : null
  const perHour = (v: number | null) => (v === null ? null : v * PER_HOUR)
  return [
    heading(1, t.title),
    paragraph(`${windowLine(window.from, window.to, zone, lang)} ${t.units}`),
    heading(2, t.summary),
    list([
      `${t.quarters}: ${quarters} ${t.of} ${expected} (${percent(quarters, expected)})`,
      `${t.mainTotal}: ${num(main.sum, 3)} m³`,
      `${t.fountainsTotal}: ${num(fountainTotal, 3)} m³ (${percent(fountainTotal, main.sum)} ${t.ofMain})`,
      `${t.peak}: ${num(perHour(main.max), 3)} m³/h ${t.peakAt} ${iso(main.maxAt)}`,
      `${t.night}: ${num(perHour(main.nightMean), 3)} m³/h, ${percent(main.nightMean, main.mean)} ${t.ofMean}`,
    ]),
    heading(2, t.byMeter),
    table(
      [...t.meterColumns],
      WATER_METERS.map((m) => {
        const s = summaries[m]
        return [
          names[m],
          num(s.sum, 3),
          num(perHour(s.mean), 3),
          num(perHour(s.max), 3),
          iso(s.maxAt),
          num(perHour(s.nightMean), 3),
          String(s.count),
        ]
      }),
    ),
    heading(2, t.byDay),
    days.length === 0
      ? paragraph(t.noData)
      : table(
          [...t.dayColumns, ...WATER_METERS.map((m) => names[m])],
          days.map((d) => [d.day, String(d.quarters), ...WATER_METERS.map((m) => num(d.sums[m], 3))]),
        ),
  ]
}
