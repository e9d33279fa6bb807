import type pg from 'pg'
import { GROUP_COLUMNS, type GroupName, MIRRORS } from '../catalogue/groups.ts'
import type { QuarterStats, StoredQuarter } from '../domain/quarter-fold.ts'
import { DAY_MS, QUARTER_MS } from '../domain/time.ts'
import { notifyMeasurementsChanged } from './measurement-changes.ts'
import {
  applyGroupRollups,
  applyMeterRollups,
  type GroupChange,
  type MeterChange,
  Periods,
  quarterValue,
} from './rollup-deltas.ts'
import { calendarZone, recomputeMeterRollups } from './rollups.ts'
import { writeVirtualQuarters } from './virtual-writes.ts'
import { lockForWrite } from './write-locks.ts'

/**
 * The one write path of quarter hours. The seed, a CSV import and the live fold of samples hand
 * their rows here; in the caller's transaction they are written, the group columns mirroring the
 * meters written follow (the one mirror rule), and the virtual meters they feed
 * (`writeVirtualQuarters`, at the same quarter hours), the rollups of the periods touched move by
 * what changed (rollup-deltas.ts) and every instance is told what changed. Nothing else in the
 * service writes a 15-minute table (but `virtual:delete`, which removes a virtual meter's rows and
 * rollups whole).
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

/**
 * Rows of a group table: `values[i]` holds the values of `columns[i]`, one per instant of `t`
 * (undefined: that column of that row is left as it is).
 */
export interface GroupQuarters {
  group: GroupName
  columns: readonly string[]
  t: number[]
  values: Array<Array<number | null | undefined>>
}

export interface QuarterWrites {
  meters?: MeterQuarters
  groups?: readonly GroupQuarters[]
  /** `keep`: a quarter hour already stored stays as it is (the seed); `replace`: it is written over. */
  existing: 'keep' | 'replace'
  /**
   * A seed or an import: live samples of the meters written start after what they wrote
   * (`meters.live_from`), so a late sample never rewrites these quarter hours.
   */
  endsLive?: boolean
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

const statsAt = (m: MeterQuarters, i: number): QuarterStats => ({
  avg: m.avg[i] ?? null,
  min: m.min[i] ?? null,
  max: m.max[i] ?? null,
  sum: m.sum[i] ?? null,
  count: m.count[i] ?? null,
  tag: m.tag[i] as string,
})

export const quarterKey = (meterId: number, t: number): string => `${meterId}@${t}`

/** The stored quarter hours of these meters and instants, keyed `meter@t`. */
export async function readQuarters(
  client: pg.PoolClient,
  meterIds: readonly number[],
  ts: readonly number[],
): Promise<Map<string, StoredQuarter>> {
  const found = new Map<string, StoredQuarter>()
  if (meterIds.length === 0) return found
  const { rows } = await client.query<StoredQuarter & { meter_id: number; t: number }>(
    `select d.meter_id, extract(epoch from d.time_15m)::float8 * 1000 as t, d.avg_value as avg, d.min_value as min,
       d.max_value as max, d.sum_value as sum, d.count_value as count, d.tag, d.live
     from unnest($1::int[], $2::float8[]) as k(meter_id, ms)
     join data_15m d on d.meter_id = k.meter_id and d.time_15m = to_timestamp(k.ms / 1000)`,
    [meterIds, ts],
  )
  for (const r of rows) found.set(quarterKey(r.meter_id, r.t), r)
  return found
}

/** Writes meter quarter hours as they are after a change (the changes' `next`); `live`: folded from samples. */
export async function storeMeterQuarters(
  client: pg.PoolClient,
  changes: readonly MeterChange[],
  live: boolean,
): Promise<void> {
  if (changes.length === 0) return
  const sorted = [...changes].sort((a, b) => a.meterId - b.meterId || a.t - b.t)
  const col = <K extends keyof QuarterStats>(k: K) => sorted.map((c) => c.next[k])
  await client.query(
    `insert into data_15m (time_15m, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag, live)
     select to_timestamp(t / 1000), m, a, mn, mx, s, c, g, $9
     from unnest($1::float8[], $2::int[], $3::float8[], $4::float8[], $5::float8[], $6::float8[], $7::int[], $8::text[])
       as u(t, m, a, mn, mx, s, c, g)
     on conflict (meter_id, time_15m) do update set avg_value = excluded.avg_value, min_value = excluded.min_value,
       max_value = excluded.max_value, sum_value = excluded.sum_value, count_value = excluded.count_value,
       tag = excluded.tag, live = excluded.live`,
    [
      sorted.map((c) => c.t),
      sorted.map((c) => c.meterId),
      col('avg'),
      col('min'),
      col('max'),
      col('sum'),
      col('count'),
      col('tag'),
      live,
    ],
  )
}

/**
 * Writes columns of a group's rows and says how each row changed. `keep`: only rows not stored yet
 * are written. `replace`: the rows are made where missing, locked in time order, read, then written
 * over - so the values a change reports as before are the ones it replaced, whoever wrote them.
 */
async function writeGroupColumns(
  client: pg.PoolClient,
  rows: GroupQuarters,
  existing: 'keep' | 'replace',
): Promise<GroupChange[]> {
  const { group, columns, t, values } = rows
  for (const column of columns) {
    if (!(GROUP_COLUMNS[group] as readonly string[]).includes(column))
      throw new Error(`${group} has no column ${column}`)
  }
  const table = `${group}_15m`
  const aliases = columns.map((_, i) => `c${i}`)
  const arrays = columns.map((_, i) => `$${i + 2}::float8[]`).join(', ')
  const epoch = 'extract(epoch from time_15m)::float8 * 1000'
  if (existing === 'keep') {
    const inserted = await client.query<{ t: number }>(
      `insert into ${table} (time_15m, ${columns.join(', ')})
       select to_timestamp(t / 1000), ${aliases.join(', ')} from unnest($1::float8[], ${arrays}) as u(t, ${aliases.join(', ')})
       order by t on conflict (time_15m) do nothing returning ${epoch} as t`,
      [t, ...values],
    )
    const index = new Map(t.map((ms, i) => [ms, i]))
    return inserted.rows.map((r) => {
      const i = index.get(r.t) as number
      return { t: r.t, inserted: true, old: columns.map(() => null), next: values.map((v) => v[i] ?? null) }
    })
  }
  const made = await client.query<{ t: number }>(
    `insert into ${table} (time_15m) select to_timestamp(t / 1000) from unnest($1::float8[]) as u(t)
     order by t on conflict (time_15m) do nothing returning ${epoch} as t`,
    [t],
  )
  const fresh = new Set(made.rows.map((r) => r.t))
  // one statement: the rows locked in time order (the CTE), then written over; what they held is returned
  const set = columns.map((c, i) => `${c} = case when u.s${i} then u.c${i} else g.${c} end`)
  const flags = columns.map((_, i) => `$${columns.length + i + 2}::bool[]`).join(', ')
  const before = await client.query<Record<string, number | null> & { t: number }>(
    `with o as materialized (
       select time_15m, ${columns.join(', ')} from ${table}
       where time_15m = any(select to_timestamp(t / 1000) from unnest($1::float8[]) as u(t)) order by time_15m for update
     )
     update ${table} g set ${set.join(', ')}
     from o, unnest($1::float8[], ${arrays}, ${flags}) as u(t, ${aliases.join(', ')}, ${columns.map((_, i) => `s${i}`).join(', ')})
     where g.time_15m = o.time_15m and o.time_15m = to_timestamp(u.t / 1000)
     returning extract(epoch from o.time_15m)::float8 * 1000 as t, ${columns.map((c) => `o.${c}`).join(', ')}`,
    [t, ...values.map((v) => v.map((x) => x ?? null)), ...values.map((v) => v.map((x) => x !== undefined))],
  )
  const old = new Map(before.rows.map((r) => [r.t, columns.map((c) => r[c] ?? null)]))
  return t.map((ms, i) => {
    const before = old.get(ms) ?? columns.map(() => null)
    return {
      t: ms,
      inserted: fresh.has(ms),
      old: before,
      next: values.map((v, c) => (v[i] === undefined ? (before[c] ?? null) : (v[i] as number | null))),
    }
  })
}

/** A group's changes, gathered over the writes of one call (direct columns and mirrors). */
type GroupWrites = Map<GroupName, Array<{ columns: readonly string[]; changes: GroupChange[] }>>

/**
 * The mirrored columns of the meters' changed quarter hours: the meter's value where `ok`, none
 * elsewhere. One write per group, whichever of its columns the changes touch.
 */
async function writeMirrors(client: pg.PoolClient, changes: readonly MeterChange[], writes: GroupWrites) {
  const byGroup = new Map<GroupName, Array<{ column: string; change: MeterChange }>>()
  for (const s of MIRRORS) {
    for (const change of changes) {
      if (change.meterId !== s.meter!.id) continue
      const list = byGroup.get(s.group) ?? []
      byGroup.set(s.group, list)
      list.push({ column: s.column, change })
    }
  }
  for (const [group, entries] of [...byGroup].sort(([a], [b]) => a.localeCompare(b))) {
    const columns = [...new Set(entries.map((e) => e.column))].sort()
    const t = [...new Set(entries.map((e) => e.change.t))].sort((a, b) => a - b)
    const row = new Map(t.map((ms, i) => [ms, i]))
    const values = columns.map(() => t.map((): number | null | undefined => undefined))
    for (const { column, change } of entries) {
      const v = change.next.tag === 'ok' ? quarterValue(change.meterId, change.next) : null
      ;(values[columns.indexOf(column)] as Array<number | null | undefined>)[row.get(change.t) as number] = v
    }
    const list = writes.get(group) ?? []
    writes.set(group, list)
    list.push({ columns, changes: await writeGroupColumns(client, { group, columns, t, values }, 'replace') })
  }
}

/**
 * The end of every write of quarter hours: the meters' changed rows are stored, their mirrored
 * columns follow, the rollups move, and the change notice is sent (delivered on commit).
 * `groups`: group rows the caller wrote itself; `stored`: the meters' rows are written already;
 * `live`: the rows are folded from their samples (the live path), so that new samples extend them.
 * The caller holds the write locks.
 */
export async function finishQuarterWrites(
  client: pg.PoolClient,
  meterChanges: readonly MeterChange[],
  groups: GroupWrites = new Map(),
  options: { stored?: boolean; live?: boolean } = {},
): Promise<void> {
  if (!options.stored) await storeMeterQuarters(client, meterChanges, options.live === true)
  await writeMirrors(client, meterChanges, groups)
  const periods = new Periods(await calendarZone(client))
  await applyMeterRollups(client, meterChanges, periods)
  const virtual = await writeFedVirtualMeters(client, meterChanges, periods)
  const tables = new Set<string>()
  const times = new Set<number>()
  if (meterChanges.length > 0) tables.add('data_15m')
  for (const c of meterChanges) times.add(c.t)
  for (const t of virtual) times.add(t)
  for (const [group, writes] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    for (const { columns, changes } of writes) {
      await applyGroupRollups(client, group, columns, changes, periods)
      if (changes.length > 0) tables.add(`${group}_15m`)
      for (const c of changes) times.add(c.t)
    }
  }
  if (tables.size === 0) return
  for (const [fromMs, toMs] of spans(times)) {
    await notifyMeasurementsChanged(client, { tables: [...tables], fromMs, toMs })
  }
}

/**
 * The virtual meters the changed meters feed, written again at those quarter hours, and their
 * rollups recomputed over the periods they touch (a virtual quarter hour is the formula over its
 * inputs' rows, not a sum of samples: its periods are recomputed, not moved). Each virtual meter is
 * locked after its inputs, so two writers of different inputs take turns on it. Returns the
 * quarter hours written or removed.
 */
async function writeFedVirtualMeters(
  client: pg.PoolClient,
  changes: readonly MeterChange[],
  periods: Periods,
): Promise<number[]> {
  if (changes.length === 0) return []
  const meterIds = changes.map((c) => c.meterId)
  const fed = await client.query<{ id: number }>(
    'select distinct virtual_id as id from virtual_meter_terms where input_id = any($1::int[])',
    [[...new Set(meterIds)]],
  )
  if (fed.rows.length === 0) return []
  await lockForWrite(
    client,
    fed.rows.map((r) => r.id),
  )
  const written = await writeVirtualQuarters(
    client,
    meterIds,
    changes.map((c) => c.t),
  )
  for (const level of periods.levels) {
    const keys = new Map<string, { meterId: number; start: number; end: number }>()
    written.t.forEach((t, i) => {
      const meterId = written.meterId[i] as number
      const [start, end] = periods.of(level, t)
      keys.set(`${meterId}|${start}`, { meterId, start, end })
    })
    if (keys.size > 0) await recomputeMeterRollups(client, level, [...keys.values()])
  }
  return written.t
}

/** Writes the rows (seed, import), their mirrored columns, rollups and change notice (see above). */
export async function writeQuarters(client: pg.PoolClient, writes: QuarterWrites): Promise<void> {
  const { meters, groups = [], existing } = writes
  const meterIds = meters?.meterId ?? []
  await lockForWrite(client, meterIds)
  const changes: MeterChange[] = []
  if (meters && meters.t.length > 0) {
    if (existing === 'keep') {
      const { rows } = await client.query<{ meter_id: number; t: number }>(
        `insert into data_15m (time_15m, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag, live)
         select to_timestamp(t / 1000), m, a, mn, mx, s, c, g, false
         from unnest($1::float8[], $2::int[], $3::float8[], $4::float8[], $5::float8[], $6::float8[], $7::int[], $8::text[])
           as u(t, m, a, mn, mx, s, c, g)
         order by m, t on conflict (meter_id, time_15m) do nothing
         returning meter_id, extract(epoch from time_15m)::float8 * 1000 as t`,
        [meters.t, meters.meterId, meters.avg, meters.min, meters.max, meters.sum, meters.count, meters.tag],
      )
      const index = new Map(meters.t.map((t, i) => [quarterKey(meters.meterId[i] as number, t), i]))
      for (const r of rows) {
        const i = index.get(quarterKey(r.meter_id, r.t)) as number
        changes.push({ meterId: r.meter_id, t: r.t, old: null, next: statsAt(meters, i) })
      }
    } else {
      const old = await readQuarters(client, meters.meterId, meters.t)
      meters.t.forEach((t, i) => {
        const meterId = meters.meterId[i] as number
        changes.push({ meterId, t, old: old.get(quarterKey(meterId, t)) ?? null, next: statsAt(meters, i) })
      })
    }
  }
  const groupWrites: GroupWrites = new Map()
  for (const rows of [...groups].sort((a, b) => a.group.localeCompare(b.group))) {
    if (rows.t.length === 0) continue
    const list = groupWrites.get(rows.group) ?? []
    groupWrites.set(rows.group, list)
    list.push({ columns: rows.columns, changes: await writeGroupColumns(client, rows, existing) })
  }
  await finishQuarterWrites(client, changes, groupWrites, { stored: existing === 'keep' })
  if (writes.endsLive && meters && meters.t.length > 0) await moveLiveFrom(client, meters)
}

/** Live samples of these meters start after the quarter hours written. */
async function moveLiveFrom(client: pg.PoolClient, meters: MeterQuarters): Promise<void> {
  const last = new Map<number, number>()
  meters.t.forEach((t, i) => {
    const id = meters.meterId[i] as number
    last.set(id, Math.max(last.get(id) ?? Number.NEGATIVE_INFINITY, t + QUARTER_MS))
  })
  await client.query(
    `update meters m set live_from = greatest(m.live_from, to_timestamp(u.ms / 1000))
     from unnest($1::int[], $2::float8[]) as u(id, ms) where m.id = u.id`,
    [[...last.keys()], [...last.values()]],
  )
}

/** Spans beyond which one span from first to last is cheaper than a notice each. */
const MAX_SPANS = 32

/**
 * The quarter hours `times` as spans for the change notice, those less than a day apart joined: a
 * late sample of last year and one of today are two short spans, not a year of cached windows.
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
