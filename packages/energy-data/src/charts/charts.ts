/**
 * The four public charts: which data each draws, over which fixed window, in which unit.
 * Energy columns hold kWh per quarter hour (x 4 = mean kW over it); water columns hold m³ per
 * quarter hour (x 4000 = mean L/h).
 */
import type { Kysely } from 'kysely'
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

export const KW_PER_KWH_QUARTER = 4
export const LH_PER_M3_QUARTER = 4000

const PLANTS = Object.keys(PLANT_NAMES) as Array<keyof typeof PLANT_NAMES>
const FOUNTAINS = Object.keys(FOUNTAIN_NAMES) as Array<keyof typeof FOUNTAIN_NAMES>

type Db = Kysely<EnergyDatabase>

export interface ChartRequest {
  lang: Language
  /** The service's zone (ENERGY_TIMEZONE). */
  zone: string
  /** Used as the window's end when the table is empty. */
  now: number
}

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

const scaled = (v: number | null, factor: number) => (v === null ? null : v * factor)

async function anchorOf(db: Db, group: 'pv' | 'aulep' | 'water', now: number): Promise<number> {
  return (await latestQuarter(db, group)) ?? now
}

async function fotovoltaico(db: Db, lang: Language, zone: string, now: number): Promise<ChartConfig> {
  const slots = quarterSlots(await anchorOf(db, 'pv', now))
  const rows = await seriesRows(db, 'pv', PLANTS, slots[0]! - 1, slots[slots.length - 1]!)
  return stackedAreaChart({
    title: pick(CHART_TEXT.fotovoltaico.title, lang),
    yTitle: pick(CHART_TEXT.fotovoltaico.y, lang),
    slots,
    series: PLANTS.map((plant) => ({
      label: PLANT_NAMES[plant][lang],
      data: align(slots, rows, (r) => scaled(r[plant], KW_PER_KWH_QUARTER)),
    })),
    lang,
    zone,
  })
}

/** Grid withdrawal of a quarter hour: the consumption PV did not cover. */
export const gridWithdrawal = (production: number | null, consumption: number | null): number | null =>
  production === null || consumption === null ? null : Math.max(consumption - production, 0)

async function bilancio(db: Db, lang: Language, zone: string, now: number): Promise<ChartConfig> {
  const slots = quarterSlots(await anchorOf(db, 'aulep', now))
  const rows = await seriesRows(
    db,
    'aulep',
    ['tot_pv_prod', 'consumo_aula_1p'],
    slots[0]! - 1,
    slots[slots.length - 1]!,
  )
  const text = CHART_TEXT.bilancio
  return stackedAreaChart({
    title: pick(text.title, lang),
    yTitle: pick(text.y, lang),
    slots,
    series: [
      {
        label: pick(text.production, lang),
        data: align(slots, rows, (r) => scaled(r.tot_pv_prod, KW_PER_KWH_QUARTER)),
        stack: 'supply',
      },
      {
        label: pick(text.grid, lang),
        data: align(slots, rows, (r) => scaled(gridWithdrawal(r.tot_pv_prod, r.consumo_aula_1p), KW_PER_KWH_QUARTER)),
        stack: 'supply',
      },
      {
        label: pick(text.consumption, lang),
        data: align(slots, rows, (r) => scaled(r.consumo_aula_1p, KW_PER_KWH_QUARTER)),
        stack: 'demand',
        line: true,
      },
    ],
    lang,
    zone,
  })
}

async function acqua(db: Db, lang: Language, zone: string, now: number): Promise<ChartConfig> {
  const window = completeDays(await latestQuarter(db, 'water'), now, zone, DAILY_DAYS)
  const rows = await dailyTotals(db, 'water', ['tot_sede_centrale', ...FOUNTAINS], window.from, window.to, zone)
  const byDay = new Map(rows.map((r) => [r.day, r.sums]))
  const fountainsOf = (day: string): number | null => {
    const sums = byDay.get(day)
    if (!sums) return null
    const values = FOUNTAINS.map((f) => sums[f]).filter((v): v is number => v !== null)
    return values.length ? values.reduce((a, b) => a + b, 0) : null
  }
  const text = CHART_TEXT.acqua
  return columnChart({
    title: pick(text.title, lang),
    yTitle: pick(text.y, lang),
    days: window.days,
    from: window.from,
    to: window.to,
    series: [
      { label: pick(text.main, lang), data: window.days.map((d) => byDay.get(d)?.tot_sede_centrale ?? null) },
      { label: pick(text.fountains, lang), data: window.days.map(fountainsOf) },
    ],
    lang,
    zone,
  })
}

async function fontanelle(db: Db, lang: Language, zone: string, now: number): Promise<ChartConfig> {
  const slots = quarterSlots(await anchorOf(db, 'water', now))
  const rows = await seriesRows(db, 'water', FOUNTAINS, slots[0]! - 1, slots[slots.length - 1]!)
  return stackedAreaChart({
    title: pick(CHART_TEXT.fontanelle.title, lang),
    yTitle: pick(CHART_TEXT.fontanelle.y, lang),
    slots,
    series: FOUNTAINS.map((f) => ({
      label: FOUNTAIN_NAMES[f][lang],
      data: align(slots, rows, (r) => scaled(r[f], LH_PER_M3_QUARTER)),
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
