import { JSON_UTF8 } from '@campus/shared'
import type { Language } from '../charts/i18n.ts'
import { formatIso } from '../domain/time.ts'
import type { PricedDays } from '../repositories/costs.ts'

/**
 * A report is a list of blocks rendered either as Markdown (GitHub tables) or as plain text
 * (underlined headings, space-aligned columns): the same content, two readings.
 */

export type Block =
  | { kind: 'heading'; level: 1 | 2 | 3; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'list'; items: string[] }
  | { kind: 'table'; headers: string[]; rows: string[][]; align?: Array<'left' | 'right'> }

export const REPORT_FORMATS = ['json', 'markdown', 'text'] as const
export type ReportFormat = (typeof REPORT_FORMATS)[number]

export const heading = (level: 1 | 2 | 3, text: string): Block => ({ kind: 'heading', level, text })
export const paragraph = (text: string): Block => ({ kind: 'paragraph', text })
export const list = (items: string[]): Block => ({ kind: 'list', items })
export const table = (headers: string[], rows: string[][], align?: Array<'left' | 'right'>): Block => ({
  kind: 'table',
  headers,
  rows,
  align,
})

const escapeCell = (text: string) => text.replace(/\|/g, '\\|')

function markdownBlock(block: Block): string {
  switch (block.kind) {
    case 'heading':
      return `${'#'.repeat(block.level)} ${block.text}`
    case 'paragraph':
      return block.text
    case 'list':
      return block.items.map((i) => `- ${i}`).join('\n')
    case 'table': {
      const align = block.headers.map((_, i) => (block.align?.[i] ?? (i === 0 ? 'left' : 'right')) === 'right')
      return [
        `| ${block.headers.map(escapeCell).join(' | ')} |`,
        `|${align.map((right) => (right ? ' ---: ' : ' --- ')).join('|')}|`,
        ...block.rows.map((r) => `| ${r.map(escapeCell).join(' | ')} |`),
      ].join('\n')
    }
  }
}

function textBlock(block: Block): string {
  switch (block.kind) {
    case 'heading': {
      const rule = block.level === 1 ? '=' : block.level === 2 ? '-' : ''
      return rule ? `${block.text}\n${rule.repeat(block.text.length)}` : block.text
    }
    case 'paragraph':
      return block.text.replace(/\*\*|`/g, '')
    case 'list':
      return block.items.map((i) => `  * ${i.replace(/\*\*|`/g, '')}`).join('\n')
    case 'table': {
      const all = [block.headers, ...block.rows]
      const widths = block.headers.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)))
      const line = (r: string[]) =>
        r
          .map((cell, i) => {
            const right = (block.align?.[i] ?? (i === 0 ? 'left' : 'right')) === 'right'
            return right ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)
          })
          .join('  ')
          .trimEnd()
      return [line(block.headers), widths.map((w) => '-'.repeat(w)).join('  '), ...block.rows.map(line)].join('\n')
    }
  }
}

const renderMarkdown = (blocks: Block[]): string => `${blocks.map(markdownBlock).join('\n\n')}\n`
const renderText = (blocks: Block[]): string => `${blocks.map(textBlock).join('\n\n')}\n`

/** Body and content type of a report in the requested format (`json`: the Markdown as a JSON string, as FastAPI would send it). */
export function renderReport(blocks: Block[], format: ReportFormat): { body: string; contentType: string } {
  switch (format) {
    case 'markdown':
      return { body: renderMarkdown(blocks), contentType: 'text/markdown; charset=utf-8' }
    case 'text':
      return { body: renderText(blocks), contentType: 'text/plain; charset=utf-8' }
    case 'json':
      return { body: JSON.stringify(renderMarkdown(blocks)), contentType: JSON_UTF8 }
  }
}

interface Numbers {
  /** Fixed decimals, thousands grouped, `n/a` (`n.d.`) when absent. */
  num(value: number | null | undefined, decimals?: number): string
  /** `part / whole` in per cent with one decimal. */
  percent(part: number | null, whole: number | null): string
  readonly missing: string
}

/** Numbers as the report's language writes them: `1,234.56` in English, `1.234,56` in Italian. */
export function numbers(lang: Language): Numbers {
  const locale = lang === 'it' ? 'it-IT' : 'en-US'
  const missing = lang === 'it' ? 'n.d.' : 'n/a'
  const num = (value: number | null | undefined, decimals = 2) =>
    value === null || value === undefined || !Number.isFinite(value)
      ? missing
      : value.toLocaleString(locale, {
          minimumFractionDigits: decimals,
          maximumFractionDigits: decimals,
          useGrouping: 'always',
        })
  return {
    num,
    percent: (part, whole) =>
      part === null || whole === null || whole === 0 ? missing : `${num((part / whole) * 100, 1)} %`,
    missing,
  }
}

/** "From ... to ... (inclusive), times in ..." of a window of whole days; `to` is exclusive. */
export function windowLine(from: number, to: number, zone: string, lang: Language): string {
  const last = formatIso(to - 1000, zone)
  return lang === 'it'
    ? `Dal ${formatIso(from, zone)} al ${last} (estremi inclusi), orari in ${zone}.`
    : `From ${formatIso(from, zone)} to ${last} (inclusive), times in ${zone}.`
}

/**
 * The coverage of a report, for its top: how many of the window's quarter hours hold data, and,
 * when some do not, that every figure covers the measured ones only.
 */
export function coverageLine(measured: number, expected: number, lang: Language): Block {
  const { percent } = numbers(lang)
  const share = `${measured} ${lang === 'it' ? 'su' : 'of'} ${expected} (${percent(measured, expected)})`
  const partial = measured < expected
  if (lang === 'it') {
    return paragraph(
      `Quarti d’ora con dati: ${share}.` +
        (partial ? ' Ogni cifra conta solo i quarti d’ora misurati: un quarto d’ora mancante non vale zero.' : ''),
    )
  }
  return paragraph(
    `Quarter hours with data: ${share}.` +
      (partial ? ' Every figure counts the measured quarter hours only: a missing one is never taken as zero.' : ''),
  )
}

/** The tariff versions a priced window was priced with (`3` or `3, 5`), or `missing`. */
export function pricedVersions(priced: PricedDays, missing: string): string {
  const versions = new Set(priced.days.flatMap((d) => d.versions?.split(',') ?? []))
  return versions.size ? [...versions].sort((a, b) => Number(a) - Number(b)).join(', ') : missing
}

/** A priced window's value per day, keyed by local day. */
export const dayValues = (priced: PricedDays): Map<string, number | null> =>
  new Map(priced.days.map((d) => [d.day, d.value]))
