import { ACCUMULATES_TO, convertQuarter, isUnitId, kindOfMetadata, unitSymbol } from '../catalogue/quantities.ts'
import type { Language } from '../charts/i18n.ts'
import { formatIso, quartersBetween } from '../domain/time.ts'
import type { DayWindow } from '../domain/window.ts'
import type { MeterRow } from '../repositories/metadata.ts'
import type { MeterDay, MeterStats } from '../repositories/views.ts'
import { type Block, coverageLine, heading, list, numbers, paragraph, table, windowLine } from './document.ts'

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
    missing: 'Quarti d’ora mancanti',
    longest: 'Intervallo più lungo tra due letture',
    samples: 'Campioni grezzi',
    tags: 'Etichette di qualità',
    tagsNote:
      'le cifre contano i quarti d’ora con etichetta ok, come /data/meters per default; gli altri sono contati qui e lasciati fuori',
    none: 'nessuna',
    statistics: 'Statistiche',
    mean: 'Media dei quarti d’ora',
    meanHow:
      'media dei valori dei quarti d’ora: ognuno pesa i suoi 15 minuti, qualunque sia il numero dei suoi campioni',
    min: 'Minimo',
    minHow: 'il campione grezzo più basso',
    max: 'Massimo',
    maxHow: 'il campione grezzo più alto',
    at: 'il',
    perQuarter: 'per quarto d’ora',
    totals: { energy: 'Energia', volume: 'Volume', irradiation: 'Irraggiamento', amount: 'Totale' },
    sumHow: (n: number) => `somma dei valori dei ${n} quarti d’ora (sum_value per energia e volumi)`,
    rateHow: (n: number, rate: string, amount: string) =>
      `somma di ${rate} x 0,25 h sui ${n} quarti d’ora misurati, in ${amount}`,
    noTotal: (what: string) => `Nessun totale: ${what} non si somma nel tempo.`,
    unknownUnit: (unit: string) => `Nessun totale: l’unità ${unit} non è nel catalogo delle serie.`,
    byDay: 'Per giorno',
    dayNote: 'Media, minimo e massimo di ogni giorno locale come sopra; il totale somma i quarti d’ora del giorno.',
    columns: ['Giorno', 'Quarti d’ora', 'Media', 'Min', 'Max'],
    noData: 'Nessun dato in questo intervallo.',
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
    missing: 'Missing quarter hours',
    longest: 'Longest interval between two readings',
    samples: 'Raw samples',
    tags: 'Data-quality tags',
    tagsNote:
      'the figures count the quarter hours tagged ok, as /data/meters does by default; the others are counted here and left out',
    none: 'none',
    statistics: 'Statistics',
    mean: 'Mean of the quarter hours',
    meanHow: 'mean of the quarter-hour values: each weighs its 15 minutes, whatever number of samples it took',
    min: 'Minimum',
    minHow: 'the smallest raw sample',
    max: 'Maximum',
    maxHow: 'the largest raw sample',
    at: 'at',
    perQuarter: 'per quarter hour',
    totals: { energy: 'Energy', volume: 'Volume', irradiation: 'Irradiation', amount: 'Total' },
    sumHow: (n: number) => `sum of the values of the ${n} quarter hours (sum_value for energy and volume)`,
    rateHow: (n: number, rate: string, amount: string) =>
      `sum of ${rate} x 0.25 h over the ${n} measured quarter hours, in ${amount}`,
    noTotal: (what: string) => `No total: ${what} does not add up over time.`,
    unknownUnit: (unit: string) => `No total: the unit ${unit} is not in the series catalogue.`,
    byDay: 'By day',
    dayNote: 'Mean, minimum and maximum of each local day as above; the total adds up the quarter hours of the day.',
    columns: ['Day', 'Quarter hours', 'Mean', 'Min', 'Max'],
    noData: 'No data in this range.',
  },
} as const

/**
 * What the meter's metadata says its quarter hours add up to: an amount per quarter hour adds
 * as it is (energy, volume); a rate accumulates over the quarter hour (kW x 0.25 h = kWh); a level
 * (temperature, pressure) has no total.
 */
interface Total {
  label: string
  unit: string
  of(sum: number | null): number | null
  how(quarters: number): string
}

function totalOf(meter: MeterRow, lang: Language): Total | { none: string } {
  const t = TEXT[lang]
  const kind = kindOfMetadata(meter.quantity_id, meter.unit_id)
  const unit = meter.unit_id
  if (!kind || !isUnitId(unit)) return { none: t.unknownUnit(meter.unit_id ?? '?') }
  if (kind.combination === 'sum') {
    const label =
      kind.quantityKind === 'quantitykind:Energy'
        ? t.totals.energy
        : kind.quantityKind === 'quantitykind:Volume'
          ? t.totals.volume
          : t.totals.amount
    return { label, unit: unitSymbol(unit), of: (sum) => sum, how: t.sumHow }
  }
  const amount = ACCUMULATES_TO[unit]
  if (!amount) return { none: t.noTotal(kind.quantityKind.replace('quantitykind:', '')) }
  const label = amount === 'unit:KiloW-HR' ? t.totals.energy : t.totals.irradiation
  return {
    label,
    unit: unitSymbol(amount),
    of: (sum) => convertQuarter(sum, unit, amount),
    how: (n) => t.rateHow(n, unitSymbol(unit), unitSymbol(amount)),
  }
}

interface MeterReportInput {
  meter: MeterRow
  window: DayWindow
  stats: MeterStats
  days: MeterDay[]
  lang: Language
}

/** Report on one meter: identity, coverage, data quality, statistics with their units, and a day-by-day table. */
export function meterReport({ meter, window, stats, days, lang }: MeterReportInput): Block[] {
  const t = TEXT[lang]
  const { num, missing: na } = numbers(lang)
  const { zone } = window
  const iso = (at: number | null) => (at === null ? na : formatIso(at, zone))
  const kind = kindOfMetadata(meter.quantity_id, meter.unit_id)
  const symbol = unitSymbol(meter.unit_id)
  // an amount per quarter hour (kWh, m³) reads "per quarter hour"; a rate or a level reads as it is
  const valueUnit = symbol ? (kind?.combination === 'sum' ? ` ${symbol} ${t.perQuarter}` : ` ${symbol}`) : ''
  const value = (v: number | null) => (v === null ? na : `${num(v, 3)}${valueUnit}`)
  const expected = quartersBetween(window.from, window.to)
  const tags = Object.entries(stats.tags)
  const total = totalOf(meter, lang)
  const totalLine =
    'none' in total
      ? total.none
      : `${total.label}: ${num(total.of(stats.total), 3)} ${total.unit} (${total.how(stats.quarters)})`
  return [
    heading(1, `${t.title}: ${meter.description}`),
    paragraph(windowLine(window.from, window.to, zone, lang)),
    coverageLine(stats.stored, expected, lang),
    heading(2, t.meter),
    list([
      `${t.id}: ${meter.id}`,
      `${t.datalogger}: ${meter.datalogger_id}${meter.datalogger_description ? ` (${meter.datalogger_description})` : ''}`,
      `${t.type}: ${meter.type_id ?? na}`,
      `${t.unit}: ${meter.unit_id ?? na}${symbol && meter.unit_id !== symbol ? ` (${symbol})` : ''}`,
      `${t.quantity}: ${meter.quantity_id ?? na}`,
      `${t.service}: ${meter.date_from ? formatIso(meter.date_from.getTime(), zone) : na} - ${
        meter.date_to ? formatIso(meter.date_to.getTime(), zone) : t.serviceTo
      }`,
      ...(meter.notes ? [`${t.notes}: ${meter.notes}`] : []),
    ]),
    heading(2, t.coverage),
    list([
      `${t.missing}: ${Math.max(expected - stats.stored, 0)}`,
      `${t.longest}: ${stats.longestStep === null ? na : `${num(stats.longestStep / 60_000, 0)} min`}`,
      `${t.samples}: ${stats.samples === null ? na : num(stats.samples, 0)}`,
      `${t.tags}: ${tags.length ? tags.map(([tag, n]) => `${tag} ${n}`).join(', ') : t.none} (${t.tagsNote})`,
    ]),
    heading(2, t.statistics),
    stats.quarters === 0
      ? paragraph(t.noData)
      : list([
          `${t.mean}: ${value(stats.mean)} (${t.meanHow})`,
          `${t.min}: ${value(stats.min)} ${t.at} ${iso(stats.minAt)} (${t.minHow})`,
          `${t.max}: ${value(stats.max)} ${t.at} ${iso(stats.maxAt)} (${t.maxHow})`,
          totalLine,
        ]),
    heading(2, t.byDay),
    ...(days.length === 0
      ? [paragraph(t.noData)]
      : [
          table(
            [
              ...t.columns.map((c, i) => (i >= 2 && valueUnit ? `${c} (${valueUnit.trim()})` : c)),
              ...('none' in total ? [] : [`${total.label} (${total.unit})`]),
            ],
            days.map((d) => [
              d.day,
              String(d.quarters),
              num(d.mean, 3),
              num(d.min, 3),
              num(d.max, 3),
              ...('none' in total ? [] : [num(total.of(d.total), 3)]),
            ]),
          ),
          paragraph(t.dayNote),
        ]),
  ]
}
