import type pg from 'pg'
import { GROUP_COLUMNS, type GroupName, MIRRORS } from '../catalogue/groups.ts'
import { DAY_MS, QUARTER_MS } from '../domain/time.ts'
import { measurementsWritten } from './measurement-writes.ts'
import { writeMirrors } from './mirrors.ts'
import { writeVirtualQuarters } from './virtual-writes.ts'

/**
 * The one write path of quarter hours. The seed, a CSV import and the live fold of samples hand
 * their rows here, tagged; in the caller's transaction they are written, the group columns
 * mirroring the meters written follow (the one mirror rule), and the virtual meters they feed
 * (`writeVirtualQuarters`, at the same quarter hours), the rollups of the periods touched are
 * recomputed and every instance is told what changed. Nothing else in the service writes a
 * 15-minute table (but `virtual:delete`, which removes a virtual meter's rows and rollups whole).
 */

/** `data_15m` rows, column by column; instants are quarter-hour starts in epoch ms. */
export interface MeterQuarters {
  t: number[]
  meterId: number[]
  avg: Array<number | null>
  min: Array<number | null>
  max: Array<number | null>
  sum: Array<number | null>
  count: Array<number | null>
  tag: string[]
}

/** Rows of a group table: `values[i]` holds the values of `columns[i]`, one per instant of `t`. */
export interface GroupQuarters {
  group: GroupName
  columns: readonly string[]
  t: number[]
  values: Array<Array<number | null>>
}

export interface QuarterWrites {
  meters?: MeterQuarters
  groups?: readonly GroupQuarters[]
  /** `keep`: a quarter hour already stored stays as it is (the seed); `replace`: it is written over. */
  existing: 'keep' | 'replace'
}

export const emptyMeterQuarters = (): MeterQuarters => ({
  t: [],
  meterId: [],
  avg: [],
  min: [],
  max: [],
  sum: [],
  count: [],
  tag: [],
})

/** Writes the rows, their mirrored columns, rollups and change notice (see above). */
export async function writeQuarters(client: pg.PoolClient, writes: QuarterWrites): Promise<void> {
  const { meters, groups = [], existing } = writes
  const tables = new Set<string>()
  const times = new Set<number>()
  if (meters && meters.t.length > 0) {
    const update =
      'update set avg_value = excluded.avg_value, min_value = excluded.min_value, max_value = excluded.max_value, sum_value = excluded.sum_value, count_value = excluded.count_value, tag = excluded.tag'
    await client.query(
      `insert into data_15m (time_15m, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag)
       select to_timestamp(t / 1000), m, a, mn, mx, s, c, g
       from unnest($1::float8[], $2::int[], $3::float8[], $4::float8[], $5::float8[], $6::float8[], $7::int[], $8::text[])
         as u(t, m, a, mn, mx, s, c, g)
       on conflict (meter_id, time_15m) do ${existing === 'keep' ? 'nothing' : update}`,
      [meters.t, meters.meterId, meters.avg, meters.min, meters.max, meters.sum, meters.count, meters.tag],
    )
    tables.add('data_15m')
    for (const t of meters.t) times.add(t)
  }
  for (const rows of groups) {
    if (rows.t.length === 0) continue
    for (const column of rows.columns) {
      if (!(GROUP_COLUMNS[rows.group] as readonly string[]).includes(column))
        throw new Error(`${rows.group} has no column ${column}`)
    }
    const aliases = rows.columns.map((_, i) => `c${i}`)
    const update = `update set ${rows.columns.map((c) => `${c} = excluded.${c}`).join(', ')}`
    await client.query(
      `insert into ${rows.group}_15m (time_15m, ${rows.columns.join(', ')})
       select to_timestamp(t / 1000), ${aliases.join(', ')}
       from unnest($1::float8[], ${rows.columns.map((_, i) => `$${i + 2}::float8[]`).join(', ')}) as u(t, ${aliases.join(', ')})
       on conflict (time_15m) do ${existing === 'keep' ? 'nothing' : update}`,
      [rows.t, ...rows.values],
    )
    tables.add(`${rows.group}_15m`)
    for (const t of rows.t) times.add(t)
  }
  if (meters && meters.t.length > 0) {
    // the columns mirroring the meters written, from the meter rows now stored
    await writeMirrors(client, meters.meterId, meters.t)
    // the virtual meters these meters feed, at the same quarter hours (so the same periods below)
    await writeVirtualQuarters(client, meters.meterId, meters.t)
    const written = new Set(meters.meterId)
    for (const series of MIRRORS) if (written.has(series.meter!.id)) tables.add(`${series.group}_15m`)
  }
  if (tables.size === 0) return
  for (const [fromMs, toMs] of spans(times)) await measurementsWritten(client, { tables: [...tables], fromMs, toMs })
}

/** Spans beyond which one span from first to last is cheaper than a recomputation each. */
const MAX_SPANS = 32

/**
 * The quarter hours `times` as spans to recompute, those less than a day apart joined: a late
 * sample of last year and one of today are two short spans, not a year of rollups.
 */
function spans(times: ReadonlySet<number>): Array<[number, number]> {
  const sorted = [...times].sort((a, b) => a - b)
  const out: Array<[number, number]> = []
  for (const t of sorted) {
    const last = out[out.length - 1]
    if (last && t <= last[1] + DAY_MS) last[1] = t + QUARTER_MS
    else out.push([t, t + QUARTER_MS])
  }
  if (out.length > MAX_SPANS) return [[(out[0] as [number, number])[0], (out[out.length - 1] as [number, number])[1]]]
  return out
}
