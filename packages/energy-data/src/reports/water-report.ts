import { GROUP_COLUMNS, seriesOf } from '../catalogue/groups.ts'
import { convertQuarter, type UnitId, unitSymbol } from '../catalogue/quantities.ts'
import { FOUNTAIN_NAMES, type Language } from '../charts/i18n.ts'
import { formatIso, quartersBetween } from '../domain/time.ts'
import type { DayWindow } from '../domain/window.ts'
import type { PricedDays } from '../repositories/costs.ts'
import type { ColumnSummary, DailyTotals } from '../repositories/views.ts'
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

/** Water meters in report order: the main meter, then the drinking fountains. */
export const WATER_METERS = GROUP_COLUMNS.water
type WaterMeter = (typeof WATER_METERS)[number]

const fountainNames = (lang: Language, prefix: string) =>
  Object.fromEntries(Object.entries(FOUNTAIN_NAMES).map(([k, v]) => [k, `${prefix} ${v[lang]}`]))

const WATER_NAMES: Record<Language, Record<WaterMeter, string>> = {
  it: { tot_sede_centrale: 'Sede centrale', ...fountainNames('it', 'Fontanella') } as Record<WaterMeter, string>,
  en: { tot_sede_centrale: 'Main site', ...fountainNames('en', 'Fountain') } as Record<WaterMeter, string>,
}

/** The unit volumes are reported in and the one flows are. */
const VOLUME: UnitId = 'unit:M3'
const FLOW: UnitId = 'unit:M3-PER-HR'

const TEXT = {
  it: {
    title: 'Rapporto acqua',
    units: (volume: string, flow: string) =>
      `Volumi in ${volume}: la somma dei volumi dei quarti d’ora misurati. Portate in ${flow}: il volume di un ` +
      'quarto d’ora diviso per 0,25 h.',
    summary: 'Sintesi',
    mainTotal: 'Totale sede centrale',
    mainTotalHow: (n: number) => `somma dei volumi dei suoi ${n} quarti d’ora misurati`,
    fountainsTotal: 'Totale fontanelle',
    fountainsHow: (share: string) =>
      `somma dei volumi delle cinque fontanelle; ${share} della sede centrale, il cui contatore le comprende`,
    peak: 'Picco sede centrale',
    peakAt: 'nel quarto d’ora che inizia',
    peakHow: 'il volume più alto di un quarto d’ora / 0,25 h',
    night: 'Portata notturna di base della sede centrale',
    nightHow: (share: string) =>
      `volume medio dei quarti d’ora tra le 02:00 e le 04:00 locali / 0,25 h; ${share} della portata media`,
    byMeter: 'Per contatore',
    meterColumns: (volume: string, flow: string) => [
      'Contatore',
      `Totale (${volume})`,
      `Portata media (${flow})`,
      `Portata di picco (${flow})`,
      'Picco il',
      `Base notturna (${flow})`,
      'Quarti',
    ],
    meterNote:
      'Totale: somma dei volumi dei quarti d’ora misurati; portata media: volume medio di un quarto d’ora / 0,25 h; ' +
      'picco: il quarto d’ora con il volume più alto; base notturna: come la portata media, tra le 02:00 e le 04:00.',
    cost: 'Costo sede centrale',
    costHow: (versions: string) =>
      `somma dei volumi x il prezzo dell’acqua in vigore in ogni quarto d’ora (tariffe: ${versions}); n/d se un ` +
      'quarto d’ora misurato non ha tariffa',
    dayCost: (currency: string) => `Costo sede centrale (${currency})`,
    byDay: 'Per giorno',
    dayColumns: ['Giorno', 'Quarti'],
    dayNote: (volume: string) =>
      `Volumi in ${volume} per giorno locale: la somma dei quarti d’ora misurati del giorno.`,
    noData: 'Nessun dato in questo intervallo.',
  },
  en: {
    title: 'Water report',
    units: (volume: string, flow: string) =>
      `Volumes in ${volume}: the sum of the volumes of the measured quarter hours. Flows in ${flow}: the volume of ` +
      'a quarter hour divided by 0.25 h.',
    summary: 'Summary',
    mainTotal: 'Main site total',
    mainTotalHow: (n: number) => `sum of the volumes of its ${n} measured quarter hours`,
    fountainsTotal: 'Drinking fountains total',
    fountainsHow: (share: string) =>
      `sum of the volumes of the five fountains; ${share} of the main site, whose meter includes them`,
    peak: 'Main site peak',
    peakAt: 'in the quarter hour starting',
    peakHow: 'the largest volume of a quarter hour / 0.25 h',
    night: 'Main site night baseline',
    nightHow: (share: string) =>
      `mean volume of the quarter hours between 02:00 and 04:00 local time / 0.25 h; ${share} of the mean flow`,
    byMeter: 'By meter',
    meterColumns: (volume: string, flow: string) => [
      'Meter',
      `Total (${volume})`,
      `Mean flow (${flow})`,
      `Peak flow (${flow})`,
      'Peak at',
      `Night baseline (${flow})`,
      'Quarters',
    ],
    meterNote:
      'Total: sum of the volumes of the measured quarter hours; mean flow: mean volume of a quarter hour / 0.25 h; ' +
      'peak: the quarter hour with the largest volume; night baseline: as the mean flow, between 02:00 and 04:00.',
    cost: 'Main site cost',
    costHow: (versions: string) =>
      `sum of the volumes x the water price in force at each quarter hour (tariffs: ${versions}); n/a when a ` +
      'measured quarter hour has no tariff',
    dayCost: (currency: string) => `Main site cost (${currency})`,
    byDay: 'By day',
    dayColumns: ['Day', 'Quarters'],
    dayNote: (volume: string) =>
      `Volumes in ${volume} per local day: the sum of the measured quarter hours of the day.`,
    noData: 'No data in this range.',
  },
} as const

interface WaterReportInput {
  window: DayWindow
  quarters: number
  summaries: Record<WaterMeter, ColumnSummary>
  days: Array<DailyTotals<WaterMeter>>
  /** tot_sede_centrale's volumes priced per day at the tariffs in force. */
  cost: PricedDays
  lang: Language
}

/** Water use per meter: volumes, peaks, the night baseline (a leak shows there first), and day by day. */
export function waterReport({ window, quarters, summaries, days, cost, lang }: WaterReportInput): Block[] {
  const t = TEXT[lang]
  const names = WATER_NAMES[lang]
  const { num, percent, missing: na } = numbers(lang)
  const costs = dayValues(cost)
  const { zone } = window
  const iso = (at: number | null) => (at === null ? na : formatIso(at, zone))
  const unitOf = (m: WaterMeter) => seriesOf('water', m).kind.unit
  const volume = (m: WaterMeter, v: number | null) => convertQuarter(v, unitOf(m), VOLUME)
  const flow = (m: WaterMeter, v: number | null) => convertQuarter(v, unitOf(m), FLOW)
  const [volumeSymbol, flowSymbol] = [unitSymbol(VOLUME), unitSymbol(FLOW)]
  const main = summaries.tot_sede_centrale
  const mainTotal = volume('tot_sede_centrale', main.sum)
  const fountains = WATER_METERS.slice(1).map((m) => volume(m, summaries[m].sum))
  const fountainTotal = fountains.some((v) => v !== null) ? fountains.reduce<number>((a, v) => a + (v ?? 0), 0) : null
  return [
    heading(1, t.title),
    paragraph(`${windowLine(window.from, window.to, zone, lang)} ${t.units(volumeSymbol, flowSymbol)}`),
    coverageLine(quarters, quartersBetween(window.from, window.to), lang),
    heading(2, t.summary),
    list([
      `${t.mainTotal}: ${num(mainTotal, 3)} ${volumeSymbol} (${t.mainTotalHow(main.count)})`,
      `${t.fountainsTotal}: ${num(fountainTotal, 3)} ${volumeSymbol} (${t.fountainsHow(percent(fountainTotal, mainTotal))})`,
      `${t.peak}: ${num(flow('tot_sede_centrale', main.max), 3)} ${flowSymbol} ${t.peakAt} ${iso(main.maxAt)} (${t.peakHow})`,
      `${t.night}: ${num(flow('tot_sede_centrale', main.nightMean), 3)} ${flowSymbol} (${t.nightHow(
        percent(main.nightMean, main.mean),
      )})`,
      `${t.cost}: ${num(cost.total, 2)} ${cost.currency ?? ''}`.trimEnd() + ` (${t.costHow(pricedVersions(cost, na))})`,
    ]),
    heading(2, t.byMeter),
    table(
      t.meterColumns(volumeSymbol, flowSymbol),
      WATER_METERS.map((m) => {
        const s = summaries[m]
        return [
          names[m],
          num(volume(m, s.sum), 3),
          num(flow(m, s.mean), 3),
          num(flow(m, s.max), 3),
          iso(s.maxAt),
          num(flow(m, s.nightMean), 3),
          String(s.count),
        ]
      }),
    ),
    paragraph(t.meterNote),
    heading(2, t.byDay),
    ...(days.length === 0
      ? [paragraph(t.noData)]
      : [
          table(
            [...t.dayColumns, ...WATER_METERS.map((m) => names[m]), t.dayCost(cost.currency ?? na)],
            days.map((d) => [
              d.day,
              String(d.quarters),
              ...WATER_METERS.map((m) => num(volume(m, d.sums[m]), 3)),
              num(costs.get(d.day) ?? null, 2),
            ]),
          ),
          paragraph(t.dayNote(volumeSymbol)),
        ]),
  ]
}
