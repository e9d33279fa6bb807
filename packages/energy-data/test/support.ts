/**
 * What the tests know without the service's code: the calendar of a zone through Intl, the
 * arithmetic of quarter hours, and how to read the reports a person reads (Markdown lists and
 * tables, numbers as `1,234.56`). Expectations are recomputed with these, never with the
 * service's modules or SQL.
 */
import { expect } from 'vitest'

export const ROME = 'Europe/Rome'
export const QUARTER = 900_000
/** Hours in a quarter hour: a mean power over it becomes energy, a volume in it becomes a flow. */
export const QUARTER_HOURS = 0.25

/** Every quarter hour in [from, to). */
export function quarters(from: string, to: string): number[] {
  const out: number[] = []
  for (let t = Date.parse(from); t < Date.parse(to); t += QUARTER) out.push(t)
  return out
}

const formats = new Map<string, Intl.DateTimeFormat>()
const dateParts = (zone: string): Intl.DateTimeFormat => {
  let format = formats.get(zone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    })
    formats.set(zone, format)
  }
  return format
}

interface Local {
  date: string
  hour: number
  minute: number
  weekend: boolean
  /** `Mon` to `Sun` */
  weekday: string
  /** `2025-10-26T02:15:00+01:00` */
  iso: string
}

/** Wall-clock facts of an instant in `zone` (Europe/Rome unless told). */
export function local(t: number, zone = ROME): Local {
  const parts = Object.fromEntries(
    dateParts(zone)
      .formatToParts(t)
      .map((p) => [p.type, p.value]),
  )
  const date = `${parts.year}-${parts.month}-${parts.day}`
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : (parts.timeZoneName ?? '').replace('GMT', '')
  return {
    date,
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    weekend: parts.weekday === 'Sat' || parts.weekday === 'Sun',
    weekday: parts.weekday ?? '',
    iso: `${date}T${parts.hour}:${parts.minute}:${parts.second}${offset}`,
  }
}

/** `YYYY-MM-DD` plus `days` calendar days. */
function addDays(date: string, days: number): string {
  const d = new Date(`${date}T12:00:00Z`)
  d.setUTCDate(d.getUTCDate() + days)
  return d.toISOString().slice(0, 10)
}

/** Every quarter hour of the local days `days`, found by walking UTC quarter hours. */
export function quartersOfDays(days: readonly string[]): number[] {
  const wanted = new Set(days)
  const first = Date.parse(`${days[0]}T00:00:00Z`) - 86_400_000
  const last = Date.parse(`${days[days.length - 1]}T00:00:00Z`) + 2 * 86_400_000
  const out: number[] = []
  for (let t = first; t < last; t += QUARTER) if (wanted.has(local(t).date)) out.push(t)
  return out
}

/** The newest local day that ends within the data: the day of the newest quarter when that quarter ends it. */
export function lastCompleteDay(latest: number): string {
  const day = local(latest).date
  return local(latest + QUARTER).date === day ? addDays(day, -1) : day
}

/** `count` local days ending with `last`. */
export const daysEndingWith = (last: string, count: number): string[] =>
  Array.from({ length: count }, (_, k) => addDays(last, k - count + 1))

/** A double as the data API serves it: 12 significant digits (src/domain/served.ts). */
export const served = (x: number): number => Number(x.toPrecision(12))

export const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0)

/** The first instant holding the largest (or smallest) value. */
export function extreme<T>(
  rows: readonly T[],
  value: (row: T) => number | null,
  at: (row: T) => number,
  largest = true,
) {
  let best: { value: number; at: number } | null = null
  for (const row of rows) {
    const v = value(row)
    if (v === null) continue
    if (!best || (largest ? v > best.value : v < best.value) || (v === best.value && at(row) < best.at)) {
      best = { value: v, at: at(row) }
    }
  }
  return best
}

/** The text after `- label: ` on a list line of the report. */
export function listLine(markdown: string, label: string): string {
  const line = markdown.split('\n').find((l) => l.startsWith(`- ${label}: `))
  if (!line) throw new Error(`no line "${label}" in\n${markdown}`)
  return line.slice(`- ${label}: `.length)
}

/** A printed number equals `expected` to the decimals it was printed with. */
export function expectPrinted(text: string, expected: number | null, what: string): void {
  if (expected === null) {
    expect(text.trim(), what).toMatch(/^n\/a/)
    return
  }
  const shown = /-?[\d,]+(?:\.(\d+))?/.exec(text)
  if (!shown) throw new Error(`${what}: no number in "${text}"`)
  const decimals = shown[1]?.length ?? 0
  const value = Number(shown[0].replace(/,/g, ''))
  expect(Math.abs(value - expected), `${what}: printed ${shown[0]}, computed ${expected}`).toBeLessThanOrEqual(
    0.5 * 10 ** -decimals + 1e-9,
  )
}

/** Cells of the Markdown table under `## title` (header and rule skipped). */
export function tableRows(markdown: string, title: string): string[][] {
  const lines = markdown.split('\n')
  const start = lines.indexOf(`## ${title}`)
  if (start < 0) throw new Error(`no section ${title} in\n${markdown}`)
  const rows: string[][] = []
  let seen = 0
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('#')) break
    if (!line.startsWith('|')) continue
    if (seen++ < 2) continue
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    )
  }
  return rows
}
