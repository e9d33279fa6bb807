import { readFile } from 'node:fs/promises'
import { commandFailed } from '@campus/shared'
import { COMMODITIES, type Commodity } from '../catalogue/quantities.ts'
import {
  type BandLine,
  bandProblems,
  DAY_SETS,
  type DaySet,
  type HourlyValue,
  MINUTES_PER_DAY,
} from '../domain/rates.ts'
import { HOUR_MS, parseInstant, QUARTER_MS } from '../domain/time.ts'
import { splitLine } from './csv.ts'

/**
 * The files of `tariffs:import` and `emissions:import`, read whole (a tariff is a few dozen lines,
 * a year of hourly factors 8,760) and validated: a file is taken whole or refused with its lines
 * named, as `import` does.
 */

export const TARIFF_HEADER = [
  'commodity',
  'valid_from',
  'valid_to',
  'days',
  'from_time',
  'to_time',
  'price',
  'currency',
]
export const EMISSION_BANDS_HEADER = ['commodity', 'valid_from', 'valid_to', 'kg_co2e_per_unit']
export const EMISSION_HOURS_HEADER = ['commodity', 'time', 'kg_co2e_per_unit']

export interface RateFile {
  bands: BandLine[]
  hours: Array<HourlyValue & { line: number }>
  /** A tariff's currency, one per file. */
  currency?: string
}

const MAX_ERRORS = 10
const DATE = /^\d{4}-\d{2}-\d{2}$/
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/

class Problems {
  readonly lines: string[] = []
  readonly path: string
  constructor(path: string) {
    this.path = path
  }
  add(line: number, column: string, message: string): void {
    this.lines.push(`${this.path}:${line}: column ${column}: ${message}`)
    if (this.lines.length >= MAX_ERRORS) throw this.error()
  }
  error() {
    const more = this.lines.length >= MAX_ERRORS ? `\n(stopped after ${MAX_ERRORS} errors)` : ''
    return commandFailed(`nothing imported:\n${this.lines.join('\n')}${more}`)
  }
}

/** The lines of a file as cells, after the header; the header as read. */
async function readCells(path: string): Promise<{ header: string[]; rows: Array<{ line: number; cells: string[] }> }> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw commandFailed(`${path}: no such file`)
    throw error
  }
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/)
  const rows: Array<{ line: number; cells: string[] }> = []
  let header: string[] | undefined
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === '') continue
    const cells = (splitLine(raw, ',') ?? [raw]).map((c) => c.trim())
    if (!header) header = cells
    else rows.push({ line: i + 1, cells })
  }
  if (!header) throw commandFailed(`nothing imported:\n${path}:1: column header: the file is empty`)
  return { header, rows }
}

function commodityOf(text: string, problems: Problems, line: number): Commodity {
  if (!(COMMODITIES as readonly string[]).includes(text)) {
    problems.add(line, 'commodity', `${JSON.stringify(text)} is not one of ${COMMODITIES.join(', ')}`)
  }
  return text as Commodity
}

function dateOf(text: string, column: string, problems: Problems, line: number): string {
  if (!DATE.test(text) || parseInstant(text) === undefined)
    problems.add(line, column, `${JSON.stringify(text)} is not a date YYYY-MM-DD`)
  return text
}

function numberOf(text: string, column: string, problems: Problems, line: number): number {
  if (!NUMBER.test(text)) problems.add(line, column, `${JSON.stringify(text)} is not a number`)
  return Number(text)
}

/** Minutes of the day of `hh:mm` on a quarter hour (`24:00` the end of the day). */
function minuteOf(text: string, column: string, problems: Problems, line: number): number {
  const m = /^(\d{2}):(\d{2})$/.exec(text)
  const minute = m ? Number(m[1]) * 60 + Number(m[2]) : Number.NaN
  if (!m || Number(m[2]) > 59 || minute > MINUTES_PER_DAY) {
    problems.add(line, column, `${JSON.stringify(text)} is not a local time hh:mm (00:00 to 24:00)`)
  } else if (minute % 15 !== 0) {
    problems.add(line, column, `${text} is not on a quarter hour (the bands price whole quarter hours)`)
  }
  return minute
}

function checkValidity(band: { validFrom: string; validTo: string }, problems: Problems, line: number): void {
  if (!(band.validFrom < band.validTo)) problems.add(line, 'valid_to', 'valid_to must be after valid_from')
}

function expectHeader(header: string[], expected: string[], problems: Problems): void {
  if (header.join(',') !== expected.join(',')) {
    problems.add(1, 'header', `expected ${expected.join(',')}, found ${header.join(',')}`)
    throw problems.error()
  }
}

function checkFields(cells: string[], count: number, problems: Problems, line: number): boolean {
  if (cells.length === count) return true
  problems.add(line, 'line', `expected ${count} fields, found ${cells.length}`)
  return false
}

/** A tariff file: `commodity,valid_from,valid_to,days,from_time,to_time,price,currency`. */
export async function readTariffFile(path: string): Promise<RateFile> {
  const problems = new Problems(path)
  const { header, rows } = await readCells(path)
  expectHeader(header, TARIFF_HEADER, problems)
  const bands: BandLine[] = []
  const currencies = new Map<string, number[]>()
  for (const { line, cells } of rows) {
    if (!checkFields(cells, TARIFF_HEADER.length, problems, line)) continue
    const [commodity, validFrom, validTo, days, fromTime, toTime, price, currency] = cells as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ]
    if (!(DAY_SETS as readonly string[]).includes(days)) {
      problems.add(line, 'days', `${JSON.stringify(days)} is not one of ${DAY_SETS.join(', ')}`)
    }
    if (currency === '') problems.add(line, 'currency', 'the currency is missing')
    currencies.set(currency, [...(currencies.get(currency) ?? []), line])
    const band: BandLine = {
      line,
      commodity: commodityOf(commodity, problems, line),
      validFrom: dateOf(validFrom, 'valid_from', problems, line),
      validTo: dateOf(validTo, 'valid_to', problems, line),
      days: days as DaySet,
      fromMinute: minuteOf(fromTime, 'from_time', problems, line),
      toMinute: minuteOf(toTime, 'to_time', problems, line),
      value: numberOf(price, 'price', problems, line),
    }
    checkValidity(band, problems, line)
    if (!(band.fromMinute < band.toMinute)) problems.add(line, 'to_time', 'to_time must be after from_time')
    bands.push(band)
  }
  if (currencies.size > 1) {
    const which = [...currencies].map(([c, lines]) => `${c || '(none)'} on lines ${lines.join(', ')}`).join('; ')
    problems.add(1, 'currency', `one currency per import, this file mixes ${which}`)
  }
  return finish(problems, { bands, hours: [], currency: [...currencies.keys()][0] as string })
}

/**
 * An emission file: `commodity,valid_from,valid_to,kg_co2e_per_unit` (factors by validity) or
 * `commodity,time,kg_co2e_per_unit` (an hourly series: each factor holds for the hour from `time`,
 * an instant as the API reads one, UTC unless it carries an offset).
 */
export async function readEmissionFile(path: string): Promise<RateFile> {
  const problems = new Problems(path)
  const { header, rows } = await readCells(path)
  const hourly = header[1] === 'time'
  expectHeader(header, hourly ? EMISSION_HOURS_HEADER : EMISSION_BANDS_HEADER, problems)
  const bands: BandLine[] = []
  const hours: Array<HourlyValue & { line: number }> = []
  for (const { line, cells } of rows) {
    if (!checkFields(cells, header.length, problems, line)) continue
    const commodity = commodityOf(cells[0] as string, problems, line)
    const value = numberOf(cells[header.length - 1] as string, 'kg_co2e_per_unit', problems, line)
    if (value < 0) problems.add(line, 'kg_co2e_per_unit', 'an emission factor is not negative')
    if (hourly) {
      const start = parseInstant(cells[1] as string)
      if (start === undefined) problems.add(line, 'time', `${JSON.stringify(cells[1])} is not a datetime`)
      else if (start % QUARTER_MS !== 0) problems.add(line, 'time', `${cells[1]} is not on a quarter hour`)
      hours.push({ line, commodity, start: start ?? Number.NaN, value })
      continue
    }
    const band: BandLine = {
      line,
      commodity,
      validFrom: dateOf(cells[1] as string, 'valid_from', problems, line),
      validTo: dateOf(cells[2] as string, 'valid_to', problems, line),
      days: 'all',
      fromMinute: 0,
      toMinute: MINUTES_PER_DAY,
      value,
    }
    checkValidity(band, problems, line)
    bands.push(band)
  }
  // an hourly series: one factor an hour, none missing, none twice
  for (const commodity of COMMODITIES) {
    const own = hours.filter((h) => h.commodity === commodity).sort((a, b) => a.start - b.start)
    for (let i = 1; i < own.length; i++) {
      const [a, b] = [own[i - 1], own[i]] as [HourlyValue & { line: number }, HourlyValue & { line: number }]
      if (b.start - a.start < HOUR_MS) problems.add(b.line, 'time', `${commodity}: overlaps the hour of line ${a.line}`)
      else if (b.start - a.start > HOUR_MS)
        problems.add(b.line, 'time', `${commodity}: an hour is missing after line ${a.line}`)
    }
  }
  return finish(problems, { bands, hours })
}

function finish(problems: Problems, file: RateFile): RateFile {
  if (problems.lines.length) throw problems.error()
  if (file.bands.length === 0 && file.hours.length === 0) {
    problems.add(2, 'line', 'the file holds no rows')
    throw problems.error()
  }
  for (const problem of bandProblems(file.bands)) problems.lines.push(`${problems.path}: ${problem}`)
  if (problems.lines.length) throw problems.error()
  return file
}
