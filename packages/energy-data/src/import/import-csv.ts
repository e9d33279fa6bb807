import { createReadStream } from 'node:fs'
import { basename } from 'node:path'
import { createInterface } from 'node:readline'
import { CommandError, commandFailed } from '@campus/shared'
import type pg from 'pg'
import { GROUP_COLUMNS, GROUP_NAMES, type GroupName } from '../catalogue/groups.ts'
import { isTag } from '../domain/tags.ts'
import { parseInstant, QUARTER_MS } from '../domain/time.ts'
import { writeQuarters } from '../repositories/quarter-writes.ts'
import { splitLine } from './csv.ts'

/**
 * `pnpm energy import FILE...`: measurements from delimited text (comma, or tab as in the
 * API's `txt` output), every row validated, every file in one transaction: one bad row and
 * nothing is loaded. Two layouts, told apart by the header:
 * - wide, one group: `time_15m` and some of that group's columns (the group is the one whose
 *   columns hold every header name, or `--group`);
 * - long, per meter: `time_15m,meter_id` and any of `avg_value,min_value,max_value,sum_value,
 *   count_value,tag` (tag defaults to `ok`).
 * Rows that already exist are replaced. Timestamps as the API takes them (UTC unless an offset
 * is given), on a quarter hour.
 */

const LONG_COLUMNS = ['avg_value', 'min_value', 'max_value', 'sum_value', 'count_value', 'tag'] as const
const BATCH = 5000
const MAX_ERRORS = 10

interface Problem {
  line: number
  column: string
  message: string
}

type Layout = { kind: 'wide'; group: GroupName; columns: string[] } | { kind: 'long'; columns: string[] }

function layoutOf(header: string[], forcedGroup: GroupName | undefined): Layout | string {
  if (header[0] !== 'time_15m') return 'the first column must be time_15m'
  const rest = header.slice(1)
  const seen = new Set<string>()
  for (const name of rest) {
    if (seen.has(name)) return `column ${name} appears twice`
    seen.add(name)
  }
  if (rest.includes('meter_id')) {
    if (rest[0] !== 'meter_id') return 'in the per-meter layout the second column must be meter_id'
    const unknown = rest.slice(1).find((c) => !(LONG_COLUMNS as readonly string[]).includes(c))
    if (unknown) return `unknown column ${unknown} (per-meter columns: meter_id, ${LONG_COLUMNS.join(', ')})`
    return { kind: 'long', columns: rest }
  }
  if (rest.length === 0) return 'no measurement column'
  const candidates = forcedGroup
    ? [forcedGroup]
    : GROUP_NAMES.filter((g) => rest.every((c) => (GROUP_COLUMNS[g] as readonly string[]).includes(c)))
  const group = candidates[0]
  if (!group) return `no group has all of the columns ${rest.join(', ')}`
  if (candidates.length > 1) return `the columns fit several groups (${candidates.join(', ')}): pass --group`
  const unknown = rest.find((c) => !(GROUP_COLUMNS[group] as readonly string[]).includes(c))
  if (unknown) return `unknown column ${unknown} for group ${group}`
  return { kind: 'wide', group, columns: rest }
}

function parseNumber(text: string): number | null | undefined {
  const t = text.trim()
  if (t === '' || t.toLowerCase() === 'null') return null
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return undefined
  return Number(t)
}

/** One batch of a file through the one write path: a group's wide rows, or per-meter rows. */
async function writeBatch(client: pg.PoolClient, layout: Layout, batch: unknown[][]): Promise<void> {
  const t = batch.map((r) => (r[0] as number) * 1000)
  if (layout.kind === 'wide') {
    await writeQuarters(client, {
      groups: [
        {
          group: layout.group,
          columns: layout.columns,
          t,
          values: layout.columns.map((_, i) => batch.map((r) => r[i + 1] as number | null)),
        },
      ],
      existing: 'replace',
    })
    return
  }
  const column = <T>(i: number) => batch.map((r) => r[i] as T)
  await writeQuarters(client, {
    meters: {
      t,
      meterId: column<number>(1),
      avg: column<number | null>(2),
      min: column<number | null>(3),
      max: column<number | null>(4),
      sum: column<number | null>(5),
      count: column<number | null>(6),
      tag: column<string>(7),
    },
    existing: 'replace',
    endsLive: true,
  })
}

async function importFile(
  client: pg.PoolClient,
  path: string,
  options: { group?: GroupName | undefined; meters: Set<number>; virtual: Set<number> },
): Promise<{ file: string; layout: string; rows: number }> {
  const file = basename(path)
  const problems: Problem[] = []
  const fail = (line: number, column: string, message: string) => {
    problems.push({ line, column, message })
    if (problems.length >= MAX_ERRORS) throw report(path, problems)
  }
  let layout: Layout | undefined
  let separator = ','
  let lineNumber = 0
  let batch: unknown[][] = []
  let count = 0
  const keys = new Set<string>()
  const flush = async () => {
    if (!batch.length || problems.length || !layout) return
    await writeBatch(client, layout, batch)
    count += batch.length
    batch = []
  }
  const lines = createInterface({
    input: createReadStream(path, { encoding: 'utf8' }),
    crlfDelay: Number.POSITIVE_INFINITY,
  })
  try {
    for await (const raw of lines) {
      lineNumber++
      const line = lineNumber === 1 ? raw.replace(/^\uFEFF/, '') : raw
      if (line.trim() === '') continue
      if (!layout) {
        separator = line.includes('\t') ? '\t' : ','
        const header = splitLine(line, separator)?.map((h) => h.trim())
        const found = header ? layoutOf(header, options.group) : 'unreadable header'
        if (typeof found === 'string') throw report(path, [{ line: lineNumber, column: 'header', message: found }])
        layout = found
        continue
      }
      const cells = splitLine(line, separator)
      if (!cells) {
        fail(lineNumber, 'line', 'unbalanced quotes')
        continue
      }
      if (cells.length !== layout.columns.length + 1) {
        fail(lineNumber, 'line', `expected ${layout.columns.length + 1} fields, found ${cells.length}`)
        continue
      }
      const time = parseInstant(cells[0] ?? '')
      if (time === undefined) {
        fail(lineNumber, 'time_15m', `${JSON.stringify(cells[0])} is not a datetime`)
        continue
      }
      if (time % QUARTER_MS !== 0) {
        fail(lineNumber, 'time_15m', `${cells[0]} is not on a quarter hour`)
        continue
      }
      const row: unknown[] = [time / 1000]
      if (layout.kind === 'wide') {
        layout.columns.forEach((column, i) => {
          const value = parseNumber(cells[i + 1] ?? '')
          if (value === undefined) fail(lineNumber, column, `${JSON.stringify(cells[i + 1])} is not a number`)
          row.push(value ?? null)
        })
        const key = String(time)
        if (keys.has(key)) fail(lineNumber, 'time_15m', `${cells[0]} appears twice in the file`)
        keys.add(key)
      } else {
        const values: Record<string, string> = {}
        layout.columns.forEach((column, i) => {
          values[column] = cells[i + 1] ?? ''
        })
        const meter = values.meter_id?.trim() ?? ''
        if (!/^\d+$/.test(meter)) fail(lineNumber, 'meter_id', `${JSON.stringify(meter)} is not a meter id`)
        else if (!options.meters.has(Number(meter))) fail(lineNumber, 'meter_id', `meter ${meter} does not exist`)
        else if (options.virtual.has(Number(meter))) {
          fail(lineNumber, 'meter_id', `meter ${meter} is virtual: its quarter hours are computed from its inputs'`)
        }
        row.push(Number(meter))
        const numbers: Record<string, number | null> = {}
        for (const column of ['avg_value', 'min_value', 'max_value', 'sum_value'] as const) {
          const value = values[column] === undefined ? null : parseNumber(values[column])
          if (value === undefined) fail(lineNumber, column, `${JSON.stringify(values[column])} is not a number`)
          numbers[column] = value ?? null
          row.push(value ?? null)
        }
        const countText = values.count_value?.trim() ?? ''
        if (countText !== '' && !/^\d+$/.test(countText)) {
          fail(lineNumber, 'count_value', `${JSON.stringify(countText)} is not a non-negative integer`)
        }
        row.push(countText === '' ? null : Number(countText))
        const { min_value: min, max_value: max, avg_value: avg } = numbers
        if (min != null && max != null && min > max) fail(lineNumber, 'min_value', 'min_value is above max_value')
        if (avg != null && ((min != null && avg < min) || (max != null && avg > max))) {
          fail(lineNumber, 'avg_value', 'avg_value is outside min_value..max_value')
        }
        const tag = values.tag?.trim() || 'ok'
        if (!isTag(tag)) fail(lineNumber, 'tag', `${JSON.stringify(tag)} is not a data-quality tag`)
        row.push(tag)
        const key = `${time}/${meter}`
        if (keys.has(key)) fail(lineNumber, 'time_15m', `${cells[0]} appears twice for meter ${meter}`)
        keys.add(key)
      }
      batch.push(row)
      if (batch.length >= BATCH) await flush()
    }
  } catch (error) {
    if (error instanceof CommandError) throw error
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw commandFailed(`${path}: no such file`)
    throw error
  }
  if (!layout) throw report(path, [{ line: 1, column: 'header', message: 'the file is empty' }])
  if (problems.length) throw report(path, problems)
  await flush()
  return { file, layout: layout.kind === 'wide' ? `${layout.group} (wide)` : 'per meter (long)', rows: count }
}

function report(path: string, problems: Problem[]): CommandError {
  const lines = problems.map((p) => `${path}:${p.line}: column ${p.column}: ${p.message}`)
  const more = problems.length >= MAX_ERRORS ? `\n(stopped after ${MAX_ERRORS} errors)` : ''
  return commandFailed(`nothing imported:\n${lines.join('\n')}${more}`)
}

/** Imports every file in one transaction; the first invalid file rolls everything back. */
export async function importFiles(
  pool: pg.Pool,
  paths: string[],
  options: { group?: GroupName | undefined } = {},
): Promise<{ imported: Array<{ file: string; layout: string; rows: number }> }> {
  const client = await pool.connect()
  try {
    await client.query('begin')
    const meters = new Set((await client.query<{ id: number }>('select id from meters')).rows.map((r) => r.id))
    const virtual = new Set((await client.query<{ id: number }>('select id from virtual_meters')).rows.map((r) => r.id))
    const imported = []
    // each batch through the one write path: rows, mirrored columns, rollups, change notice, when this commits
    for (const path of paths) imported.push(await importFile(client, path, { group: options.group, meters, virtual }))
    await client.query('commit')
    return { imported }
  } catch (error) {
    await client.query('rollback').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}
