/**
 * The four public charts: which series each draws, over which fixed window, in which unit. Values
 * are converted from each series' unit in the catalogue (pv and aulep columns are mean kW, water
 * columns m³ per quarter hour) to the unit the chart speaks.
 */
import type { Kysely } from 'kysely'
import { type GroupColumn, type GroupName, seriesOf } from '../catalogue/groups.ts'
import { convertQuarter, type UnitId, unitSymbol } from '../catalogue/quantities.ts'
import type { EnergyDatabase } from '../db/schema.ts'
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

const PLANTS = Object.keys(PLANT_NAMES) as Array<keyof typeof PLANT_NAMES>
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

/** The 672 quarter hours ending with the newest one stored (now when there is none). */
async function windowOf(db: Db, name: ChartName, now: number): Promise<number[]> {
  return quarterSlots((await latestQuarter(db, CHART_GROUPS[name])) ?? now, SERIES_DAYS)
}

async function fotovoltaico(db: Db, lang: Language, zone: string, now: number): Promise<ChartConfig> {
  const slots = await windowOf(db, 'fotovoltaico', now)
  const rows = await seriesRows(db, 'pv', PLANTS, slots[0]! - 1, slots[slots.length - 1]!)
  const kw = inUnit('pv', POWER)
  return stackedAreaChart({
    title: pick(CHART_TEXT.fotovoltaico.title, lang),
    yTitle: `${pick(CHART_TEXT.fotovoltaico.y, lang)} (${unitSymbol(POWER)})`,
    slots,
    series: PLANTS.map((plant) => ({
      label: PLANT_NAMES[plant][lang],
      data: align(slots, rows, (r) => kw(plant, r[plant])),
    })),
    lang,
    zone,
  })
}

/** Grid withdrawal of a quarter hour: the consumption PV did not cover. */
const gridWithdrawal = (production: number | null, consumption: number | null): number | null =>
  production === null || consumption === null ? null : Math.max(consumption - production, 0)

async function bilancio(db: Db, lang: Language, zone: string, now: number): Promise<ChartConfig> {
  const slots = await windowOf(db, 'bilancio', now)
  const rows = await seriesRows(
    db,
    'aulep',
    ['tot_pv_prod', 'consumo_aula_1p'],
    slots[0]! - 1,
    slots[slots.length - 1]!,
  )
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

async function acqua(db: Db, lang: Language, zone: string, now: number): Promise<ChartConfig> {
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
  return columnChart({
    title: pick(text.title, lang),
    yTitle: `${pick(text.y, lang)} (${unitSymbol(VOLUME)}/${pick(text.perDay, lang)})`,
    days: window.days,
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

async function fontanelle(db: Db, lang: Language, zone: string, now: number): Promise<ChartConfig> {
  const slots = await windowOf(db, 'fontanelle', now)
  const rows = await seriesRows(db, 'water', FOUNTAINS, slots[0]! - 1, slots[slots.length - 1]!)
  // the volume of a quarter hour as the mean flow over it
  const flow = inUnit('water', FLOW)
  return stackedAreaChart({
    title: pick(CHART_TEXT.fontanelle.title, lang),
    yTitle: `${pick(CHART_TEXT.fontanelle.y, lang)} (${unitSymbol(FLOW)})`,
    slots,
    series: FOUNTAINS.map((f) => ({
      label: FOUNTAIN_NAMES[f][lang],
      data: align(slots, rows, (r) => flow(f, r[f])),
    })),
    lang,
    zone,
  })
}

const BUILDERS: Record<ChartName, (db: Db, lang: Language, zone: string, now: number) => Promise<ChartConfig>> = {
  fotovoltaico,
  bilancio,
  acqua,
  fontanelle,
}

export function buildChart(db: Db, name: ChartName, request: ChartRequest): Promise<ChartConfig> {
  return BUILDERS[name](db, request.lang, request.zone, request.now)
}
