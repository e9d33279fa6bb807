import { convertQuarter, type UnitId, unitSymbol } from '../catalogue/quantities.ts'
import type { Language } from '../charts/i18n.ts'
import { HOUR_MS, QUARTER_MS, quartersBetween } from '../domain/time.ts'
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
const SCHEDULE_SHARE = 0.5

/** The units of the report: energy of the year and of each month, mean power by hour. */
const ENERGY: UnitId = 'unit:MegaW-HR'
const POWER: UnitId = 'unit:KiloW'
/** Hours in a quarter hour: running quarter hours to running hours (a duration, not a unit of the series). */
const QUARTER_HOURS = QUARTER_MS / HOUR_MS

interface SeriesSchedule {
  name: string
  column: string
  /** Energy of the year in MWh: the quarter hours' mean powers accumulated over 0.25 h each. */
  energy: number | null
  runningHours: number
  quarters: number
  /** Mean kW per local hour 0-23, weekdays and weekends. */
  profile: { weekday: Array<number | null>; weekend: Array<number | null> }
  /** Share of quarter hours running per local hour 0-23. */
  runningShare: { weekday: Array<number | null>; weekend: Array<number | null> }
  /** Per month 1-12: energy (MWh) and running hours. */
  months: Array<{ energy: number | null; runningHours: number | null }>
}

/**
 * Folds the database's (month, day type, hour) cells of one column, kept in `unit` (from the
 * series catalogue), into its schedule.
 */
export function foldSchedule<C extends string>(
  cells: Array<ScheduleCell<C>>,
  column: C,
  name: string,
  unit: UnitId,
): SeriesSchedule {
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
  const mean = (a: { sum: number; count: number }) => (a.count ? convertQuarter(a.sum / a.count, unit, POWER) : null)
  const share = (a: { running: number; count: number }) => (a.count ? a.running / a.count : null)
  const energy = (a: { sum: number; count: number }) => (a.count ? convertQuarter(a.sum, unit, ENERGY) : null)
  return {
    name,
    column,
    energy: energy({ sum, count }),
    runningHours: running * QUARTER_HOURS,
    quarters: count,
    profile: { weekday: hours.weekday.map(mean), weekend: hours.weekend.map(mean) },
    runningShare: { weekday: hours.weekday.map(share), weekend: hours.weekend.map(share) },
    months: months.map((m) => ({ energy: energy(m), runningHours: m.count ? m.running * QUARTER_HOURS : null })),
  }
}

const hh = (h: number) => `${String(h).padStart(2, '0')}:00`

/**
 * Hours where the share reaches SCHEDULE_SHARE, as ranges: `07:00-19:00`, `always` (`sempre`),
 * `never` (`mai`); no schedule is read from hours that were never measured.
 */
export function scheduleRanges(shares: Array<number | null>, lang: Language): string {
  const on = shares.map((s) => s !== null && s >= SCHEDULE_SHARE)
  if (shares.every((s) => s === null)) return lang === 'it' ? 'nessun dato' : 'no data'
  const measured = shares.filter((s) => s !== null).length
  if (measured < shares.length) {
    return lang === 'it' ? `dati incompleti (${measured} ore su 24)` : `incomplete data (${measured} of 24 hours)`
  }
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
      `serie è in funzione in almeno il ${SCHEDULE_SHARE * 100} % dei suoi quarti d’ora. Fine settimana: sabato e ` +
      'domenica. Energia in MWh: somma delle potenze medie dei quarti d’ora misurati (kW) x 0,25 h / 1000. Ore di ' +
      'funzionamento: quarti d’ora in funzione x 0,25 h. Copertura: quarti d’ora con un valore / quarti d’ora ' +
      'dell’anno.',
    coverage: (expected: number, list: string, partial: boolean) =>
      `Quarti d’ora con dati, sui ${expected} dell’anno: ${list}.` +
      (partial ? ' Ogni cifra conta solo i quarti d’ora misurati: un quarto d’ora mancante non vale zero.' : ''),
    summary: 'Sintesi',
    summaryColumns: (energy: string) => [
      'Serie',
      `Energia (${energy})`,
      'Ore di funzionamento',
      'Feriali',
      'Fine settimana',
      'Copertura',
    ],
    profile: (power: string) => `Potenza media per ora del giorno (${power})`,
    profileNote: 'Media delle potenze medie dei quarti d’ora misurati in quell’ora locale, feriali e festivi a parte.',
    hour: 'Ora',
    weekday: 'feriale',
    weekend: 'festivo',
    energy: (energy: string) => `Energia per mese (${energy})`,
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
      `least ${SCHEDULE_SHARE * 100} % of that hour's quarter hours. Weekend is Saturday and Sunday. Energy in ` +
      'MWh: the mean powers of the measured quarter hours (kW) x 0.25 h, summed, / 1000. Running hours: running ' +
      'quarter hours x 0.25 h. Coverage: quarter hours with a value / quarter hours of the year.',
    coverage: (expected: number, list: string, partial: boolean) =>
      `Quarter hours with data, of the year's ${expected}: ${list}.` +
      (partial ? ' Every figure counts the measured quarter hours only: a missing one is never taken as zero.' : ''),
    summary: 'Summary',
    summaryColumns: (energy: string) => [
      'Series',
      `Energy (${energy})`,
      'Running hours',
      'Weekday schedule',
      'Weekend schedule',
      'Coverage',
    ],
    profile: (power: string) => `Mean power by hour of the day (${power})`,
    profileNote: 'Mean of the quarter-hour mean powers measured in that local hour, weekdays apart from weekends.',
    hour: 'Hour',
    weekday: 'weekday',
    weekend: 'weekend',
    energy: (energy: string) => `Energy by month (${energy})`,
    running: 'Running hours by month',
    month: 'Month',
    months: ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'],
    noData: (name: string, year: number) => `${name}: no data in ${year}.`,
  },
} as const

interface PalinsestiInput {
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
  const expected = quartersBetween(from, to)
  const [energy, power] = [unitSymbol(ENERGY), unitSymbol(POWER)]
  const partial = series.some((s) => s.quarters < expected)
  return [
    heading(1, `${t.title} ${year}`),
    paragraph(t.intro(zone, expected)),
    paragraph(
      t.coverage(
        expected,
        series.map((s) => `${s.name} ${s.quarters} (${percent(s.quarters, expected)})`).join(', '),
        partial,
      ),
    ),
    heading(2, t.summary),
    table(
      t.summaryColumns(energy),
      series.map((s) => [
        `${s.name} (${s.column})`,
        num(s.energy, 3),
        num(s.runningHours, 2),
        scheduleRanges(s.runningShare.weekday, lang),
        scheduleRanges(s.runningShare.weekend, lang),
        percent(s.quarters, expected),
      ]),
      ['left', 'right', 'right', 'left', 'left', 'right'],
    ),
    heading(2, t.profile(power)),
    table(
      [t.hour, ...series.flatMap((s) => [`${s.name} ${t.weekday}`, `${s.name} ${t.weekend}`])],
      Array.from({ length: 24 }, (_, h) => [
        hh(h),
        ...series.flatMap((s) => [num(s.profile.weekday[h] ?? null, 1), num(s.profile.weekend[h] ?? null, 1)]),
      ]),
    ),
    paragraph(t.profileNote),
    heading(2, t.energy(energy)),
    table(
      [t.month, ...series.map((s) => s.name)],
      t.months.map((m, i) => [m, ...series.map((s) => num(s.months[i]!.energy, 3))]),
    ),
    heading(2, t.running),
    table(
      [t.month, ...series.map((s) => s.name)],
      t.months.map((m, i) => [m, ...series.map((s) => num(s.months[i]!.runningHours, 2))]),
    ),
    list(series.filter((s) => s.quarters === 0).map((s) => t.noData(s.name, year))),
  ].filter((b) => b.kind !== 'list' || b.items.length > 0)
}
