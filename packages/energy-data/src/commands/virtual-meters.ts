import { commandFailed, usageError } from '@campus/shared'
import type pg from 'pg'
import { meterEntry, meterMetadata } from '../catalogue/meters.ts'
import { KINDS, unitSymbol } from '../catalogue/quantities.ts'
import { formatFormula, parseFormula } from '../domain/formula.ts'
import { DAY_MS } from '../domain/time.ts'
import { notifyMeasurementsChanged } from '../repositories/measurement-changes.ts'
import { writeQuarters } from '../repositories/quarter-writes.ts'
import { inTransaction } from '../repositories/transaction.ts'
import { computeVirtualQuarters } from '../repositories/virtual-writes.ts'

/**
 * `virtual:create`, `virtual:list`, `virtual:delete`: meters computed from other meters' quarter
 * hours (`repositories/virtual-writes.ts` says how). A virtual meter's inputs are meters of the
 * series catalogue, all of one kind (so of one dimension and unit): its kind, unit and commodity
 * are theirs.
 */

/** Days of quarter hours a new virtual meter's past is written in, each through the one write path. */
const BACKFILL_DAYS = 31

interface VirtualMeterRow {
  id: number
  description: string
  formula: string
  kind: string
  unit_id: string | null
  quantity_id: string | null
  created_at: Date
  inputs: number[]
  coefficients: number[]
  quarter_hours: number
  first: Date | null
  last: Date | null
}

function describe(row: VirtualMeterRow) {
  return {
    id: row.id,
    name: row.description.replace(/^\d+\)\s*/, ''),
    formula: row.formula,
    kind: row.kind,
    unit_id: row.unit_id,
    unit: unitSymbol(row.unit_id),
    quantity_id: row.quantity_id,
    inputs: row.inputs.map((id, i) => ({ meter_id: id, coefficient: row.coefficients[i] })),
    quarter_hours: row.quarter_hours,
    first_quarter_hour: row.first?.toISOString() ?? null,
    last_quarter_hour: row.last?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  }
}

async function virtualMeters(client: pg.Pool | pg.PoolClient, id?: number): Promise<VirtualMeterRow[]> {
  const { rows } = await client.query<VirtualMeterRow>(
    `select m.id, m.description, v.formula, v.kind, m.unit_id, m.quantity_id, v.created_at,
       (select array_agg(input_id order by input_id) from virtual_meter_terms where virtual_id = v.id) as inputs,
       (select array_agg(coefficient order by input_id) from virtual_meter_terms where virtual_id = v.id) as coefficients,
       (select count(*)::int from data_15m where meter_id = v.id) as quarter_hours,
       (select min(time_15m) from data_15m where meter_id = v.id) as first,
       (select max(time_15m) from data_15m where meter_id = v.id) as last
     from virtual_meters v join meters m on m.id = v.id
     where $1::int is null or v.id = $1
     order by v.id`,
    [id ?? null],
  )
  return rows
}

function meterId(text: string | undefined, flag: string): number {
  if (text === undefined || !/^\d{1,9}$/.test(text.trim())) throw usageError(`${flag} is a meter id (a whole number)`)
  return Number(text)
}

export async function virtualCreate(
  pool: pg.Pool,
  input: { id?: string | undefined; name?: string | undefined; formula?: string | undefined },
) {
  const id = meterId(input.id, '--id')
  const name = input.name?.trim()
  if (!name) throw usageError('virtual:create needs --name TEXT')
  if (input.formula === undefined) throw usageError('virtual:create needs --formula "860 - 861 - 862"')
  const terms = parseFormula(input.formula)
  if ('error' in terms) throw usageError(`--formula: ${terms.error}`)
  if (meterEntry(id)) throw commandFailed(`meter ${id} is a meter of the estate: choose another --id`)
  if (terms.some((t) => t.meterId === id)) throw commandFailed(`meter ${id} cannot be an input of itself`)

  const created = await inTransaction(pool, async (client) => {
    const ids = [id, ...terms.map((t) => t.meterId)]
    const { rows: known } = await client.query<{
      id: number
      date_from: Date | null
      date_to: Date | null
      virtual: boolean
    }>(
      `select id, date_from, date_to, exists (select 1 from virtual_meters v where v.id = m.id) as virtual
       from meters m where id = any($1::int[]) for update`,
      [ids],
    )
    const byId = new Map(known.map((m) => [m.id, m]))
    if (byId.has(id)) throw commandFailed(`meter ${id} exists already: choose another --id`)
    const inputs = terms.map((t) => {
      const row = byId.get(t.meterId)
      if (!row) throw commandFailed(`meter ${t.meterId} does not exist`)
      if (row.virtual)
        throw commandFailed(`meter ${t.meterId} is virtual: the inputs of a virtual meter are real meters`)
      const entry = meterEntry(t.meterId)
      if (!entry) throw commandFailed(`meter ${t.meterId} is not in the series catalogue: what it measures is unknown`)
      return { ...t, row, entry }
    })
    const kinds = new Set(inputs.map((i) => i.entry.kind))
    if (kinds.size > 1) {
      const what = inputs.map((i) => `${i.meterId} ${i.entry.kind} (${KINDS[i.entry.kind].unit})`).join(', ')
      throw commandFailed(`the inputs of a virtual meter are of one kind and unit; these are not: ${what}`)
    }
    const first = inputs[0]!.entry
    const { unit_id, quantity_id } = meterMetadata(first)
    // one Brick class when the inputs share one (brick:isVirtualMeter is what `virtual` says)
    const bricks = new Set(inputs.map((i) => i.entry.brick))
    const since = inputs.map((i) => i.row.date_from?.getTime() ?? Number.NEGATIVE_INFINITY)
    const until = inputs.map((i) => i.row.date_to?.getTime() ?? Number.POSITIVE_INFINITY)
    const dateFrom = Math.max(...since)
    const dateTo = Math.min(...until)
    const formula = formatFormula(terms)
    await client.query(
      `insert into meters (id, description, notes, date_from, date_to, datalogger_id, type_id, unit_id, quantity_id)
       values ($1, $2, null, $3, $4, null, $5, $6, $7)`,
      [
        id,
        `${id}) ${name}`,
        Number.isFinite(dateFrom) ? new Date(dateFrom) : null,
        Number.isFinite(dateTo) ? new Date(dateTo) : null,
        bricks.size === 1 ? first.brick : null,
        unit_id,
        quantity_id,
      ],
    )
    await client.query('insert into virtual_meters (id, formula, kind) values ($1, $2, $3)', [id, formula, first.kind])
    await client.query(
      `insert into virtual_meter_terms (virtual_id, input_id, coefficient)
       select $1, input_id, coefficient from unnest($2::int[], $3::float8[]) as t(input_id, coefficient)`,
      [id, terms.map((t) => t.meterId), terms.map((t) => t.coefficient)],
    )
    // its past, a month at a time, through the one write path (rollups, change notice)
    const { rows: span } = await client.query<{ lo: Date | null; hi: Date | null }>(
      'select min(time_15m) as lo, max(time_15m) as hi from data_15m where meter_id = any($1::int[])',
      [terms.map((t) => t.meterId)],
    )
    const { lo, hi } = span[0] ?? { lo: null, hi: null }
    if (lo && hi) {
      for (let from = lo.getTime(); from <= hi.getTime(); from += BACKFILL_DAYS * DAY_MS) {
        const meters = await computeVirtualQuarters(client, id, from, from + BACKFILL_DAYS * DAY_MS)
        if (meters.t.length > 0) await writeQuarters(client, { meters, existing: 'replace' })
      }
    }
    return (await virtualMeters(client, id))[0] as VirtualMeterRow
  })
  return describe(created)
}

export async function virtualList(pool: pg.Pool) {
  return { virtual_meters: (await virtualMeters(pool)).map(describe) }
}

/** Removes a virtual meter, its quarter hours and their rollups; its id is free again. */
export async function virtualDelete(pool: pg.Pool, input: { id?: string | undefined }) {
  const id = meterId(input.id, '--id')
  const deleted = await inTransaction(pool, async (client) => {
    const [meter] = await virtualMeters(client, id)
    if (!meter) throw commandFailed(`meter ${id} is not a virtual meter`)
    await client.query('delete from data_15m where meter_id = $1', [id])
    // every level: the key leads with the level, then the meter
    await client.query("delete from data_rollup where level in ('hour', 'day', 'month') and meter_id = $1", [id])
    await client.query('delete from virtual_meters where id = $1', [id])
    await client.query('delete from meters where id = $1', [id])
    if (meter.first && meter.last) {
      await notifyMeasurementsChanged(client, {
        tables: ['data_15m'],
        fromMs: meter.first.getTime(),
        toMs: meter.last.getTime() + 900_000,
      })
    }
    return meter
  })
  return { deleted: describe(deleted) }
}
