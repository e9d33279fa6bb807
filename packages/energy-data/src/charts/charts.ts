/**
 * The four public charts: which series each draws, over which fixed window, in which unit. Values
 * are converted from each series' unit in the catalogue (pv and aulep columns are mean kW, water
 * columns m³ per quarter hour) to the unit the chart speaks.
 */
import type { Kysely } from 'kysely'
import { type GroupColumn, type GroupName, seriesOf } from '../catalogue/groups.ts'
import { convertQuarter, type UnitId, unitSymbol } from '../catalogue/quantities.ts'
import type { EnergyDatabase } from '../db/schema.ts'
import { localMidnight, quartersBetween } from '../domain/time.ts'
import { completeDays, quarterSlots } from '../domain/window.ts'
import { dailyTotals, latestQuarter, seriesRows } from '../repositories/views.ts'
import { type ChartConfig, columnChart, stackedAreaChart } from './configs.ts'
import { CHART_TEXT, FOUNTAIN_NAMES, type Language, PLANT_NAMES, pick } from './i18n.ts'

/** The fixed windows of the charts. */
export const SERIES_DAYS = 7
export const DAILY_DAYS = 30

export const CHART_NAMES = ['fotovoltaico', 'bilancio', 'acqua', 'fontanelle'] as const
export type ChartName = (typeof CHART_NAMES)[number]

/** The table each chart reads: its newest quarter hour ends the chart's window. */
export const CHART_GROUPS: Record<ChartName, GroupName> = {
  fotovoltaico: 'pv',
  bilancio: 'aulep',
  acqua: 'water',
  fontanelle: 'water',
}

/** The unit each chart draws in. */
const POWER: UnitId = 'unit:KiloW'
const VOLUME: UnitId = 'unit:M3'
const FLOW: UnitId = 'unit:L-PER-HR'

const FOUNTAINS = Object.keys(FOUNTAIN_NAMES) as Array<keyof typeof FOUNTAIN_NAMES>

type Db = Kysely<EnergyDatabase>

interface ChartRequest {
  lang: Language
  /** The service's zone (ENERGY_TIMEZONE). */
  zone: string
  /** Used as the window's end when the table is empty. */
  now: number
}

/** A column's quarter-hour value in the chart's unit. */
const inUnit =
  <G extends GroupName>(group: G, to: UnitId) =>
  (column: GroupColumn<G>, value: number | null): number | null =>
    convertQuarter(value, seriesOf(group, column).kind.unit, to)

/** Values of the quarter hours `slots`, null where no row is stored. */
function align<R extends { time: number }>(
  slots: number[],
  rows: R[],
  value: (row: R) => number | null,
): Array<number | null> {
  const byTime = new Map(rows.map((r) => [r.time, r]))
  return slots.map((t) => {
    const row = byTime.get(t)
    return row ? value(row) : null
  })
}

/**
 * The chart's window, the 672 quarter hours ending with the newest one its table holds (now when
 * there is none), and the rows of `columns` over it.
 */
async function windowRows<G extends GroupName, C extends GroupColumn<G>>(
  db: Db,
  name: ChartName,
  group: G,
  columns: readonly C[],
  now: number,
) {
  const slots = quarterSlots((await latestQuarter(db, CHART_GROUPS[name])) ?? now, SERIES_DAYS)
  const rows = await seriesRows(db, group, columns, slots[0]! - 1, slots[slots.length - 1]!)
  return { slots, rows }
}

/** A stacked area per column of `names` (each in the chart's `unit`), over the chart's window. */
async function stackedColumns<G extends GroupName, C extends GroupColumn<G>>(
  db: Db,
  name: 'fotovoltaico' | 'fontanelle',
  group: G,
  names: Record<C, Record<Language, string>>,
  unit: UnitId,
  { lang, zone, now }: ChartRequest,
  total?: { column: GroupColumn<G>; label: Record<Language, string> },
): Promise<ChartConfig> {
  const columns = Object.keys(names) as C[]
  const read: GroupColumn<G>[] = total ? [...columns, total.column] : columns
  const { slots, rows } = await windowRows(db, name, group, read, now)
  const convert = inUnit(group, unit)
  return stackedAreaChart({
    title: pick(CHART_TEXT[name].title, lang),
    yTitle: `${pick(CHART_TEXT[name].y, lang)} (${unitSymbol(unit)})`,
    slots,
    series: [
      ...columns.map((column) => ({
        label: names[column][lang],
        data: align(slots, rows, (r) => convert(column, r[column])),
      })),
      // the metered total as a line of its own: where a part is missing, the pile stops short of it
      ...(total
        ? [
            {
              label: pick(total.label, lang),
              data: align(slots, rows, (r) => convert(total.column, r[total.column])),
              stack: 'metered',
              line: true,
            },
          ]
        : []),
    ],
    lang,
    zone,
  })
}

const fotovoltaico = (db: Db, request: ChartRequest) =>
  stackedColumns(db, 'fotovoltaico', 'pv', PLANT_NAMES, POWER, request, {
    column: 'tot_pv',
    label: CHART_TEXT.fotovoltaico.total,
  })

// the volume of a quarter hour as the mean flow over it
const fontanelle = (db: Db, request: ChartRequest) =>
  stackedColumns(db, 'fontanelle', 'water', FOUNTAIN_NAMES, FLOW, request)

/** Grid withdrawal of a quarter hour: the consumption PV did not cover. */
const gridWithdrawal = (production: number | null, consumption: number | null): number | null =>
  production === null || consumption === null ? null : Math.max(consumption - production, 0)

async function bilancio(db: Db, { lang, zone, now }: ChartRequest): Promise<ChartConfig> {
  const { slots, rows } = await windowRows(db, 'bilancio', 'aulep', ['tot_pv_prod', 'consumo_aula_1p'], now)
  const kw = inUnit('aulep', POWER)
  const text = CHART_TEXT.bilancio
  return stackedAreaChart({
    title: pick(text.title, lang),
    yTitle: `${pick(text.y, lang)} (${unitSymbol(POWER)})`,
    slots,
    series: [
      {
        label: pick(text.production, lang),
        data: align(slots, rows, (r) => kw('tot_pv_prod', r.tot_pv_prod)),
        stack: 'supply',
      },
      {
        label: pick(text.grid, lang),
        data: align(slots, rows, (r) =>
          gridWithdrawal(kw('tot_pv_prod', r.tot_pv_prod), kw('consumo_aula_1p', r.consumo_aula_1p)),
        ),
        stack: 'supply',
      },
      {
        label: pick(text.consumption, lang),
        data: align(slots, rows, (r) => kw('consumo_aula_1p', r.consumo_aula_1p)),
        stack: 'demand',
        line: true,
      },
    ],
    lang,
    zone,
  })
}

async function acqua(db: Db, { lang, zone, now }: ChartRequest): Promise<ChartConfig> {
  const window = completeDays(await latestQuarter(db, CHART_GROUPS.acqua), now, zone, DAILY_DAYS)
  const rows = await dailyTotals(db, 'water', ['tot_sede_centrale', ...FOUNTAINS], window.from, window.to, zone)
  const byDay = new Map(rows.map((r) => [r.day, r.sums]))
  // a day's volume: its quarter hours' volumes added up
  const m3 = inUnit('water', VOLUME)
  const fountainsOf = (day: string): number | null => {
    const sums = byDay.get(day)
    if (!sums) return null
    const values = FOUNTAINS.map((f) => m3(f, sums[f])).filter((v): v is number => v !== null)
    return values.length ? values.reduce((a, b) => a + b, 0) : null
  }
  const text = CHART_TEXT.acqua
  // a day some of whose readings are missing says so: its columns add up the measured ones only
  const measured = window.days.map((d) => {
    const of = quartersBetween(localMidnight(d, zone), localMidnight(d, zone, 1))
    const row = rows.find((r) => r.day === d)
    const counts = row ? Object.values<number>(row.counts) : [0]
    return { measured: Math.min(...counts), of }
  })
  return columnChart({
    title: pick(text.title, lang),
    yTitle: `${pick(text.y, lang)} (${unitSymbol(VOLUME)}/${pick(text.perDay, lang)})`,
    days: window.days,
    measured,
    from: window.from,
    to: window.to,
    series: [
      {
        label: pick(text.main, lang),
        data: window.days.map((d) => m3('tot_sede_centrale', byDay.get(d)?.tot_sede_centrale ?? null)),
      },
      { label: pick(text.fountains, lang), data: window.days.map(fountainsOf) },
    ],
    lang,
    zone,
  })
}

const BUILDERS: Record<ChartName, (db: Db, request: ChartRequest) => Promise<ChartConfig>> = {
  fotovoltaico,
  bilancio,
  acqua,
  fontanelle,
}

export function buildChart(db: Db, name: ChartName, request: ChartRequest): Promise<ChartConfig> {
  return BUILDERS[name](db, request)
}
