/**
 * Chart.js 4 configurations built from the data: plain JSON objects (no callbacks) that
 * `new Chart(canvas, config)` takes as they are.
 */
import type { ChartConfiguration, ChartDataset } from 'chart.js'
import { formatIso, localParts, QUARTER_MS } from '../domain/time.ts'
import { CHART_TEXT, type Language, localDateFormat, localDateTime, pick } from './i18n.ts'

export type ChartConfig = ChartConfiguration<'line' | 'bar', Array<number | null>, string>

/** Distinguishable on white and on the dashboard's dark header alike. */
const PALETTE = ['#f2a900', '#2e7d32', '#1565c0', '#c62828', '#6a1b9a', '#00838f', '#ef6c00', '#5d4037']

const translucent = (hex: string) => `${hex}99`

/** Three decimals: well under the meters' resolution, and the JSON stays small. */
const round3 = (value: number | null): number | null => (value === null ? null : Math.round(value * 1000) / 1000)

/** Axis label of a quarter hour in local time, e.g. `lun 20/10, 14:15`. */
const quarterLabel = (instant: number, lang: Language, zone: string): string =>
  localDateFormat(lang, zone, { weekday: true, time: true }).format(new Date(instant))

/**
 * Labels of consecutive quarter hours. The hour repeated when clocks go back would print twice
 * alike; both occurrences then carry their UTC offset (`dom 26/10, 02:15 +02:00` / `+01:00`).
 */
function quarterLabels(slots: number[], lang: Language, zone: string): string[] {
  const labels = slots.map((t) => quarterLabel(t, lang, zone))
  const seen = new Map<string, number>()
  for (const label of labels) seen.set(label, (seen.get(label) ?? 0) + 1)
  return labels.map((label, i) => (seen.get(label)! > 1 ? `${label} ${formatIso(slots[i]!, zone).slice(-6)}` : label))
}

/**
 * The x-axis ticks of a quarter-hour chart: the local date (`26/12`, short enough for seven on a
 * phone) at each local midnight, nothing elsewhere. Chart.js draws these labels on the axis (`scales.x.labels`, every one kept) while its
 * tooltips fall back to the full quarter-hour labels of `data.labels` where a tick label is empty;
 * grid lines are drawn at the midnights only.
 */
function midnightTicks(slots: number[], lang: Language, zone: string) {
  const format = localDateFormat(lang, zone)
  const midnight = slots.map((t) => {
    const p = localParts(t, zone)
    return p.hour === 0 && p.minute === 0
  })
  return {
    labels: slots.map((t, i) => (midnight[i] ? format.format(new Date(t)) : '')),
    lineWidth: midnight.map((m) => (m ? 1 : 0)),
  }
}

/** Axis label of a local day `YYYY-MM-DD` (read at its local noon, safe on DST days). */
const dayLabel = (day: string, lang: Language, zone: string): string =>
  localDateFormat(lang, zone, { weekday: true }).format(new Date(`${day}T12:00:00Z`))

/** "From ... to ... (zone)": the first and last instant (or local day) drawn. */
function windowSubtitle(from: number, to: number, lang: Language, zone: string, withTime: boolean): string {
  return pick(CHART_TEXT.window, lang)
    .replace('{from}', localDateTime(from, lang, zone, withTime))
    .replace('{to}', localDateTime(to, lang, zone, withTime))
    .replace('{zone}', zone)
}

interface AreaSeries {
  label: string
  data: Array<number | null>
  /** Series with the same stack id pile up; a series on its own stack is drawn as a line. */
  stack?: string
  line?: boolean
}

interface AreaChartInput {
  title: string
  yTitle: string
  slots: number[]
  series: AreaSeries[]
  lang: Language
  zone: string
}

/** Stacked areas over quarter hours; a missing quarter is `null` and shows as a gap (never as zero). */
export function stackedAreaChart(input: AreaChartInput): ChartConfig {
  const firstOfStack = new Set<string>()
  const datasets = input.series.map((s, i): ChartDataset<'line', Array<number | null>> => {
    const stack = s.stack ?? 'total'
    const color = PALETTE[i % PALETTE.length]!
    const first = !firstOfStack.has(stack)
    firstOfStack.add(stack)
    return {
      label: s.label,
      data: s.data.map(round3),
      stack,
      borderColor: color,
      backgroundColor: s.line ? color : translucent(color),
      borderWidth: s.line ? 2 : 1,
      borderDash: s.line ? [6, 3] : undefined,
      fill: s.line ? false : first ? 'origin' : '-1',
      pointRadius: 0,
      // the legend draws this shape: a filled square for an area, a line for a line
      pointStyle: s.line ? 'line' : 'rect',
      tension: 0,
      spanGaps: false,
    }
  })
  const from = input.slots[0] ?? 0
  // the window ends where its last quarter hour does
  const to = (input.slots[input.slots.length - 1] ?? 0) + QUARTER_MS
  const ticks = midnightTicks(input.slots, input.lang, input.zone)
  return {
    type: 'line',
    data: { labels: quarterLabels(input.slots, input.lang, input.zone), datasets },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      // room for a midnight label near the right edge (Chart.js pads only for the first and last tick)
      layout: { padding: { right: 32 } },
      interaction: { mode: 'index', intersect: false },
      plugins: {
        title: { display: true, text: input.title },
        subtitle: { display: true, text: windowSubtitle(from, to, input.lang, input.zone, true) },
        legend: { position: 'bottom', labels: { usePointStyle: true } },
        tooltip: { mode: 'index', intersect: false },
      },
      scales: {
        x: {
          title: { display: true, text: pick(CHART_TEXT.x15m, input.lang) },
          labels: ticks.labels,
          ticks: { autoSkip: false, maxRotation: 0 },
          grid: { lineWidth: ticks.lineWidth },
        },
        y: {
          stacked: true,
          beginAtZero: true,
          title: { display: true, text: input.yTitle },
        },
      },
    },
  }
}

interface ColumnChartInput {
  title: string
  yTitle: string
  days: string[]
  /** Per day, the quarter hours measured (of the least complete series) and the quarter hours of the day. */
  measured?: Array<{ measured: number; of: number }>
  from: number
  to: number
  series: Array<{ label: string; data: Array<number | null> }>
  lang: Language
  zone: string
}

/** Columns per local day, side by side (the series are not added up). */
export function columnChart(input: ColumnChartInput): ChartConfig {
  return {
    type: 'bar',
    data: {
      // a day with missing quarter hours reads "(93/96)" after its name: measured of the day's
      labels: input.days.map((d, i) => {
        const coverage = input.measured?.[i]
        const label = dayLabel(d, input.lang, input.zone)
        return coverage && coverage.measured < coverage.of ? `${label} (${coverage.measured}/${coverage.of})` : label
      }),
      datasets: input.series.map((s, i) => ({
        label: s.label,
        data: s.data.map(round3),
        backgroundColor: PALETTE[(i + 2) % PALETTE.length]!,
        borderColor: PALETTE[(i + 2) % PALETTE.length]!,
        borderWidth: 1,
      })),
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: { mode: 'index', intersect: false },
      plugins: {
        title: { display: true, text: input.title },
        subtitle: {
          display: true,
          text: [
            windowSubtitle(input.from, input.to - 1, input.lang, input.zone, false),
            // what the "(93/96)" after a day's name means, once there is one
            ...(input.measured?.some((c) => c.measured < c.of) ? [pick(CHART_TEXT.coverage, input.lang)] : []),
          ].join(' · '),
        },
        legend: { position: 'bottom' },
      },
      scales: {
        x: { title: { display: true, text: pick(CHART_TEXT.xDay, input.lang) }, ticks: { maxRotation: 60 } },
        y: { beginAtZero: true, title: { display: true, text: input.yTitle } },
      },
    },
  }
}
