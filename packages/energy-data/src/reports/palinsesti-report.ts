import type { Language } from '../charts/i18n.ts'
import { QUARTER_MS } from '../domain/time.ts'
import type { ScheduleCell } from '../repositories/views.ts'
import { type Block, heading, list, numbers, paragraph, table } from './document.ts'

/**
 * "Palinsesti": the operating schedules of a year - when each chiller plant and building load
 * runs, by local hour of the day, weekday against weekend (public holidays count as the weekday
 * they fall on), and month by month.
 */

/** Series of the schedule report: the table each lives in and its column. */
export const SCHEDULE_SERIES = [
  { group: 'centrali_frigo', column: 'cf1_tot', name: { it: 'Centrale frigo 1', en: 'Chiller plant 1' } },
  { group: 'centrali_frigo', column: 'cf2_tot', name: { it: 'Centrale frigo 2', en: 'Chiller plant 2' } },
  { group: 'centrali_frigo', column: 'cf3_tot', name: { it: 'Centrale frigo 3', en: 'Chiller plant 3' } },
  { group: 'datacenter_1', column: 'tot_dc', name: { it: 'Data center', en: 'Data centre' } },
  { group: 'aulep', column: 'consumo_aula_1p', name: { it: 'Edificio Aule P', en: 'Aule P building' } },
] as const

/** A series counts as running in a quarter hour above this share of its own peak of the year. */
export const RUNNING_SHARE = 0.1
/** An hour belongs to the schedule when the series runs in at least this share of its quarter hours. */
export const SCHEDULE_SHARE = 0.5

const KW = 4

export interface SeriesSchedule {
  name: string
  column: string
  energyKwh: number | null
  runningHours: number
  quarters: number
  /** Mean kW per local hour 0-23, weekdays and weekends. */
  profile: { weekday: Array<number | null>; weekend: Array<number | null> }
  /** Share of quarter hours running per local hour 0-23. */
  runningShare: { weekday: Array<number | null>; weekend: Array<number | null> }
  /** Per month 1-12: energy (kWh) and running hours. */
  months: Array<{ energyKwh: number | null; runningHours: number | null }>
}

/** Folds the database's (month, day type, hour) cells of one column into its schedule. */
export function foldSchedule<C extends string>(cells: Array<ScheduleCell<C>>, column: C, name: string): SeriesSchedule {
  const acc = () => Array.from({ length: 24 }, () => ({ sum: 0, count: 0, running: 0 }))
  const hours = { weekday: acc(), weekend: acc() }
  const months = Array.from({ length: 12 }, () => ({ sum: 0, count: 0, running: 0 }))
  let sum = 0
  let count = 0
  let running = 0
  for (const cell of cells) {
    const s = cell.sums[column] ?? 0
    const n = cell.counts[column]
    const r = cell.running[column]
    const h = hours[cell.weekend ? 'weekend' : 'weekday'][cell.hour]!
    h.sum += s
    h.count += n
    h.running += r
    const m = months[cell.month - 1]!
    m.sum += s
    m.count += n
    m.running += r
    sum += s
    count += n
    running += r
  }
  const mean = (a: { sum: number; count: number }) => (a.count ? (a.sum / a.count) * KW : null)
  const share = (a: { running: number; count: number }) => (a.count ? a.running / a.count : null)
  return {
    name,
    column,
    energyKwh: count ? sum : null,
    runningHours: running / 4,
    quarters: count,
    profile: { weekday: hours.weekday.map(mean), weekend: hours.weekend.map(mean) },
    runningShare: { weekday: hours.weekday.map(share), weekend: hours.weekend.map(share) },
    months: months.map((m) => ({ energyKwh: m.count ? m.sum : null, runningHours: m.count ? m.running / 4 : null })),
  }
}

const hh = (h: number) => `${String(h).padStart(2, '0')}:00`

/** Hours where the share reaches SCHEDULE_SHARE, as ranges: `07:00-19:00`, `always` (`sempre`), `never` (`mai`). */
export function scheduleRanges(shares: Array<number | null>, lang: Language): string {
  const on = shares.map((s) => s !== null && s >= SCHEDULE_SHARE)
  if (shares.every((s) => s === null)) return lang === 'it' ? 'nessun dato' : 'no data'
  if (on.every(Boolean)) return lang === 'it' ? 'sempre' : 'always'
  if (!on.some(Boolean)) return lang === 'it' ? 'mai' : 'never'
  const ranges: string[] = []
  for (let h = 0; h < 24; h++) {
    if (on[h] && !on[h - 1]) {
      let end = h
      while (end < 24 && on[end]) end++
      ranges.push(`${hh(h)}-${end === 24 ? '24:00' : hh(end)}`)
    }
  }
  return ranges.join(', ')
}

const TEXT = {
  it: {
    title: 'Palinsesti di funzionamento',
    intro: (zone: string, expected: number) =>
      `Ora locale ${zone}, l’intero anno (${expected} quarti d’ora). Una serie è in funzione in un quarto d’ora ` +
      `sopra il ${RUNNING_SHARE * 100} % del proprio picco dell’anno; un’ora fa parte del palinsesto quando la ` +
      `serie è in funzione in almeno il ${SCHEDULE_SHARE * 100} % dei suoi quarti d’ora. Fine settimana: sabato e domenica.`,
    summary: 'Sintesi',
    summaryColumns: ['Serie', 'Energia (MWh)', 'Ore di funzionamento', 'Feriali', 'Fine settimana', 'Copertura'],
    profile: 'Potenza media per ora del giorno (kW)',
    hour: 'Ora',
    weekday: 'feriale',
    weekend: 'festivo',
    energy: 'Energia per mese (MWh)',
    running: 'Ore di funzionamento per mese',
    month: 'Mese',
    months: ['Gen', 'Feb', 'Mar', 'Apr', 'Mag', 'Giu', 'Lug', 'Ago', 'Set', 'Ott', 'Nov', 'Dic'],
    noData: (name: string, year: number) => `${name}: nessun dato nel ${year}.`,
  },
  en: {
    title: 'Operating schedules',
    intro: (zone: string, expected: number) =>
      `Local time ${zone}, the whole year (${expected} quarter hours). A series is running in a quarter hour above ` +
      `${RUNNING_SHARE * 100} % of its own peak of the year; an hour belongs to its schedule when it runs in at ` +
      `least ${SCHEDULE_SHARE * 100} % of that hour's quarter hours. Weekend is Saturday and Sunday.`,
    summary: 'Summary',
    summaryColumns: ['Series', 'Energy (MWh)', 'Running hours', 'Weekday schedule', 'Weekend schedule', 'Coverage'],
    profile: 'Mean power by hour of the day (kW)',
    hour: 'Hour',
    weekday: 'weekday',
    weekend: 'weekend',
    energy: 'Energy by month (MWh)',
    running: 'Running hours by month',
    month: 'Month',
    months: ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'],
    noData: (name: string, year: number) => `${name}: no data in ${year}.`,
  },
} as const

export interface PalinsestiInput {
  year: number
  zone: string
  from: number
  to: number
  series: SeriesSchedule[]
  lang: Language
}

export function palinsestiReport({ year, zone, from, to, series, lang }: PalinsestiInput): Block[] {
  const t = TEXT[lang]
  const { num, percent } = numbers(lang)
  const expected = Math.round((to - from) / QUARTER_MS)
  const mwh = (kwh: number | null) => (kwh === null ? null : kwh / 1000)
  return [
    heading(1, `${t.title} ${year}`),
    paragraph(t.intro(zone, expected)),
    heading(2, t.summary),
    table(
      [...t.summaryColumns],
      series.map((s) => [
        `${s.name} (${s.column})`,
        num(mwh(s.energyKwh), 2),
        num(s.runningHours, 2),
        scheduleRanges(s.runningShare.weekday, lang),
        scheduleRanges(s.runningShare.weekend, lang),
        percent(s.quarters, expected),
      ]),
      ['left', 'right', 'right', 'left', 'left', 'right'],
    ),
    heading(2, t.profile),
    table(
      [t.hour, ...series.flatMap((s) => [`${s.name} ${t.weekday}`, `${s.name} ${t.weekend}`])],
      Array.from({ length: 24 }, (_, h) => [
        hh(h),
        ...series.flatMap((s) => [num(s.profile.weekday[h] ?? null, 1), num(s.profile.weekend[h] ?? null, 1)]),
      ]),
    ),
    heading(2, t.energy),
    table(
      [t.month, ...series.map((s) => s.name)],
      t.months.map((m, i) => [m, ...series.map((s) => num(mwh(s.months[i]!.energyKwh), 2))]),
    ),
    heading(2, t.running),
    table(
      [t.month, ...series.map((s) => s.name)],
      t.months.map((m, i) => [m, ...series.map((s) => num(s.months[i]!.runningHours, 2))]),
    ),
    list(series.filter((s) => s.quarters === 0).map((s) => t.noData(s.name, year))),
  ].filter((b) => b.kind !== 'list' || b.items.length > 0)
}
