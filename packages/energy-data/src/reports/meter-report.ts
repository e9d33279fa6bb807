import type { Language } from '../charts/i18n.ts'
import { formatIso, QUARTER_MS } from '../domain/time.ts'
import type { DayWindow } from '../domain/window.ts'
import type { MeterDay, MeterRow, MeterStats } from '../repositories/views.ts'
import { type Block, heading, list, numbers, paragraph, table } from './document.ts'

/** Quarter hours in `[from, to)`: 92, 96 or 100 a local day. */
export function expectedQuarters(from: number, to: number): number {
  return Math.max(Math.round((to - from) / QUARTER_MS), 0)
}

/** Unit symbol of a QUDT unit id, for headings (`unit:KiloW-HR` -> `kWh`). */
export function unitSymbol(unitId: string | null): string {
  const symbols: Record<string, string> = {
    'unit:KiloW-HR': 'kWh',
    'unit:KiloW': 'kW',
    'unit:W': 'W',
    'unit:M3': 'm³',
    'unit:L': 'L',
    'unit:DEG_C': '°C',
    'unit:PERCENT': '%',
    'unit:W-PER-M2': 'W/m²',
  }
  return unitId ? (symbols[unitId] ?? unitId.replace(/^unit:/, '')) : ''
}

/** "From ... to ... (inclusive), times in ..." in the report's language; `to` is exclusive. */
export function windowLine(from: number, to: number, zone: string, lang: Language): string {
  const last = formatIso(to - 1000, zone)
  return lang === 'it'
    ? `Dal ${formatIso(from, zone)} al ${last} (estremi inclusi), orari in ${zone}.`
    : `From ${formatIso(from, zone)} to ${last} (inclusive), times in ${zone}.`
}

const TEXT = {
  it: {
    title: 'Rapporto contatore',
    meter: 'Contatore',
    id: 'Id',
    datalogger: 'Datalogger',
    type: 'Tipo',
    unit: 'Unità',
    quantity: 'Grandezza',
    service: 'In servizio',
    serviceTo: 'oggi',
    notes: 'Note',
    coverage: 'Copertura',
    quarters: 'Quarti d’ora con dati',
    of: 'su',
    missing: 'Quarti d’ora mancanti',
    longest: 'Intervallo più lungo tra due letture',
    samples: 'Campioni grezzi',
    tags: 'Etichette di qualità',
    none: 'nessuna',
    statistics: 'Statistiche',
    mean: 'Media (pesata sui campioni)',
    min: 'Minimo',
    max: 'Massimo',
    at: 'il',
    sum: 'Somma dei valori',
    byDay: 'Per giorno',
    noData: 'Nessun dato in questo intervallo.',
    columns: ['Giorno', 'Quarti d’ora', 'Media', 'Min', 'Max', 'Somma'],
  },
  en: {
    title: 'Meter report',
    meter: 'Meter',
    id: 'Id',
    datalogger: 'Datalogger',
    type: 'Type',
    unit: 'Unit',
    quantity: 'Quantity',
    service: 'In service',
    serviceTo: 'today',
    notes: 'Notes',
    coverage: 'Coverage',
    quarters: 'Quarter hours with data',
    of: 'of',
    missing: 'Missing quarter hours',
    longest: 'Longest interval between two readings',
    samples: 'Raw samples',
    tags: 'Data-quality tags',
    none: 'none',
    statistics: 'Statistics',
    mean: 'Mean (weighted by samples)',
    min: 'Minimum',
    max: 'Maximum',
    at: 'at',
    sum: 'Sum of values',
    byDay: 'By day',
    noData: 'No data in this range.',
    columns: ['Day', 'Quarter hours', 'Mean', 'Min', 'Max', 'Sum'],
  },
} as const

export interface MeterReportInput {
  meter: MeterRow
  window: DayWindow
  stats: MeterStats
  days: MeterDay[]
  lang: Language
}

/** Report on one meter: identity, coverage, data quality, statistics and a day-by-day table. */
export function meterReport({ meter, window, stats, days, lang }: MeterReportInput): Block[] {
  const t = TEXT[lang]
  const { num, percent, missing: na } = numbers(lang)
  const { zone } = window
  const iso = (at: number | null) => (at === null ? na : formatIso(at, zone))
  const unit = unitSymbol(meter.unit_id)
  const withUnit = (v: number | null) => (v === null ? na : `${num(v, 3)}${unit ? ` ${unit}` : ''}`)
  const expected = expectedQuarters(window.from, window.to)
  const tags = Object.entries(stats.tags)
  return [
    heading(1, `${t.title}: ${meter.description}`),
    paragraph(windowLine(window.from, window.to, zone, lang)),
    heading(2, t.meter),
    list([
      `${t.id}: ${meter.id}`,
      `${t.datalogger}: ${meter.datalogger_id}${meter.datalogger_description ? ` (${meter.datalogger_description})` : ''}`,
      `${t.type}: ${meter.type_id ?? na}`,
      `${t.unit}: ${meter.unit_id ?? na}`,
      `${t.quantity}: ${meter.quantity_id ?? na}`,
      `${t.service}: ${meter.date_from ? formatIso(meter.date_from.getTime(), zone) : na} - ${
        meter.date_to ? formatIso(meter.date_to.getTime(), zone) : t.serviceTo
      }`,
      ...(meter.notes ? [`${t.notes}: ${meter.notes}`] : []),
    ]),
    heading(2, t.coverage),
    list([
      `${t.quarters}: ${stats.quarters} ${t.of} ${expected} (${percent(stats.quarters, expected)})`,
      `${t.missing}: ${Math.max(expected - stats.quarters, 0)}`,
      `${t.longest}: ${stats.longestStep === null ? na : `${num(stats.longestStep / 60_000, 0)} min`}`,
      `${t.samples}: ${stats.samples === null ? na : num(stats.samples, 0)}`,
      `${t.tags}: ${tags.length ? tags.map(([tag, n]) => `${tag} ${n}`).join(', ') : t.none}`,
    ]),
    heading(2, t.statistics),
    stats.quarters === 0
      ? paragraph(t.noData)
      : list([
          `${t.mean}: ${withUnit(stats.mean)}`,
          `${t.min}: ${withUnit(stats.min)} ${t.at} ${iso(stats.minAt)}`,
          `${t.max}: ${withUnit(stats.max)} ${t.at} ${iso(stats.maxAt)}`,
          `${t.sum}: ${withUnit(stats.sum)}`,
        ]),
    heading(2, t.byDay),
    days.length === 0
      ? paragraph(t.noData)
      : table(
          [...t.columns],
          days.map((d) => [d.day, String(d.quarters), num(d.mean, 3), num(d.min, 3), num(d.max, 3), num(d.sum, 3)]),
        ),
  ]
}
