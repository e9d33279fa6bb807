import type { MeterDay, MeterRow, MeterStats } from '../repositories/views.ts'
import { type Block, heading, list, num, paragraph, percent, table } from './document.ts'
import type { ReportWindow } from './report-window.ts'
import { formatIso, QUARTER_MS } from './zoned-time.ts'

/** Quarter-hour slots whose start lies in `[from, to]`. */
export function expectedQuarters(from: number, to: number): number {
  const first = Math.ceil(from / QUARTER_MS)
  const last = Math.floor(to / QUARTER_MS)
  return Math.max(last - first + 1, 0)
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

export interface MeterReportInput {
  meter: MeterRow
  window: ReportWindow
  stats: MeterStats
  days: MeterDay[]
}

/** Report on one meter: identity, coverage, data quality, statistics and a day-by-day table. */
export function meterReport({ meter, window, stats, days }: MeterReportInput): Block[] {
  const { zone } = window
  const iso = (t: number | null) => (t === null ? 'n/a' : formatIso(t, zone))
  const unit = unitSymbol(meter.unit_id)
  const withUnit = (v: number | null, decimals = 3) =>
    v === null ? 'n/a' : `${num(v, decimals)}${unit ? ` ${unit}` : ''}`
  const expected = expectedQuarters(window.from, window.to)
  const missing = Math.max(expected - stats.quarters, 0)
  const tags = Object.entries(stats.tags)
  return [
    heading(1, `Meter report: ${meter.description}`),
    paragraph(`From ${iso(window.from)} to ${iso(window.to)} (inclusive), times in ${zone}.`),
    heading(2, 'Meter'),
    list([
      `Id: ${meter.id}`,
      `Datalogger: ${meter.datalogger_id}${meter.datalogger_description ? ` (${meter.datalogger_description})` : ''}`,
      `Type: ${meter.type_id ?? 'n/a'}`,
      `Unit: ${meter.unit_id ?? 'n/a'}`,
      `Quantity: ${meter.quantity_id ?? 'n/a'}`,
      `In service: ${meter.date_from ? formatIso(meter.date_from.getTime(), zone) : 'n/a'} to ${
        meter.date_to ? formatIso(meter.date_to.getTime(), zone) : 'today'
      }`,
      ...(meter.notes ? [`Notes: ${meter.notes}`] : []),
    ]),
    heading(2, 'Coverage'),
    list([
      `Quarter hours with data: ${stats.quarters} of ${expected} (${percent(stats.quarters, expected)})`,
      `Missing quarter hours: ${missing}`,
      `Longest interval between two readings: ${
        stats.longestStep === null ? 'n/a' : `${num(stats.longestStep / 60_000, 0)} min`
      }`,
      `Raw samples: ${stats.samples === null ? 'n/a' : num(stats.samples, 0)}`,
      `Data-quality tags: ${tags.length ? tags.map(([tag, n]) => `${tag} ${n}`).join(', ') : 'none'}`,
    ]),
    heading(2, 'Statistics'),
    stats.quarters === 0
      ? paragraph('No data in this range.')
      : list([
          `Mean (weighted by samples): ${withUnit(stats.mean)}`,
          `Minimum: ${withUnit(stats.min)} at ${iso(stats.minAt)}`,
          `Maximum: ${withUnit(stats.max)} at ${iso(stats.maxAt)}`,
          `Sum of values: ${withUnit(stats.sum)}`,
        ]),
    heading(2, 'By day'),
    days.length === 0
      ? paragraph('No data in this range.')
      : table(
          ['Day', 'Quarter hours', 'Mean', 'Min', 'Max', 'Sum'],
          days.map((d) => [d.day, String(d.quarters), num(d.mean, 3), num(d.min, 3), num(d.max, 3), num(d.sum, 3)]),
        ),
  ]
}
