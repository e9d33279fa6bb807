import type pg from 'pg'
import { TAGS } from '../domain/tags.ts'
import { EPOCH_MS } from './measurements.ts'
import { AMOUNT_KINDS, METER_QUARTER_VALUE } from './meter-value.ts'
import type { MeterQuarters } from './quarter-writes.ts'

/**
 * The quarter hours of virtual meters, kept by the one write path: whenever an input's quarter
 * hours are written, the virtual meters it feeds are written again at those quarter hours, in
 * the same transaction, before the rollups of the periods are recomputed. The rule, in one place
 * (`COMPUTED`):
 *
 * - a virtual quarter hour exists only where every input holds a quarter-hour value (a row whose
 *   `sum_value` for an amount, `avg_value` for a mean, is not null): never a partial sum; where an
 *   input's value goes missing, the virtual quarter hour is removed;
 * - its value is the formula over the inputs' values, in `sum_value` for an amount kind and
 *   `avg_value` for a mean, the columns a real meter of the kind holds its value in; the other
 *   statistics (min, max, count, the other mean or sum) cannot be derived from the inputs' (the
 *   minimum of a sum is not the sum of the minima) and are null;
 * - its tag is the least trusted of its inputs' (in the order of `TAGS`: ok, estimated,
 *   interpolated, suspect, invalid), so a filter of the tags up to one of them selects exactly the
 *   quarter hours whose every input it selects; an amount below zero (a remainder larger than its
 *   whole: a meter missed, double counting) is `suspect`.
 */

/** The quarter hours of virtual meters `touched` (a query of `id, t` pairs) computed from their inputs. */
const COMPUTED = (touched: string) => `
  select x.id, x.t, vm.kind = any('{${AMOUNT_KINDS.join(',')}}'::text[]) as amount,
    sum(v.coefficient * ${METER_QUARTER_VALUE}) as value,
    count(${METER_QUARTER_VALUE}) = count(*) as complete,
    max(array_position('{${TAGS.join(',')}}'::text[], d.tag)) as severity
  from (${touched}) x
  join virtual_meters vm on vm.id = x.id
  join virtual_meter_terms v on v.virtual_id = x.id
  left join data_15m d on d.meter_id = v.input_id and d.time_15m = x.t
  group by x.id, x.t, vm.kind`

/** The stored row of a computed quarter hour, column by column (`data_15m`'s order). */
const ROW = `case when amount then null else value end, null::float8, null::float8,
  case when amount then value end, null::int,
  case when amount and value < 0 then 'suspect' else ('{${TAGS.join(',')}}'::text[])[severity] end`

/** Quarter hours of virtual meters written or removed: meter ids and instants (epoch ms), pairwise. */
export interface VirtualQuarters {
  meterId: number[]
  t: number[]
}

/**
 * Writes again the quarter hours of the virtual meters fed by the quarter hours just written,
 * `(meterIds[i], quarterMs[i])` (epoch ms), and says which it wrote or removed. One statement;
 * where no virtual meter is fed by those meters it reads one index entry and writes nothing.
 */
export async function writeVirtualQuarters(
  client: pg.PoolClient,
  meterIds: number[],
  quarterMs: number[],
): Promise<VirtualQuarters> {
  const touched = `select distinct v.virtual_id as id, to_timestamp(w.ms / 1000) as t
    from unnest($1::int[], $2::float8[]) as w(meter_id, ms)
    join virtual_meter_terms v on v.input_id = w.meter_id`
  const { rows } = await client.query<{ meter_id: number; t: number }>(
    `with computed as (${COMPUTED(touched)}),
     written as (
       insert into data_15m (time_15m, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag)
       select t, id, ${ROW} from computed where complete
       on conflict (meter_id, time_15m) do update set avg_value = excluded.avg_value, min_value = excluded.min_value,
         max_value = excluded.max_value, sum_value = excluded.sum_value, count_value = excluded.count_value,
         tag = excluded.tag
       returning meter_id, time_15m
     ),
     removed as (
       delete from data_15m d using computed c where d.meter_id = c.id and d.time_15m = c.t and not c.complete
       returning d.meter_id, d.time_15m
     )
     select meter_id, ${EPOCH_MS('time_15m')} as t from written
     union all select meter_id, ${EPOCH_MS('time_15m')} from removed`,
    [meterIds, quarterMs],
  )
  return { meterId: rows.map((r) => r.meter_id), t: rows.map((r) => r.t) }
}

/**
 * Every quarter hour of virtual meter `id` in `[fromMs, toMs)` that its inputs make, as the rows
 * the one write path takes (`writeQuarters`): how a new virtual meter gets its past.
 */
export async function computeVirtualQuarters(
  client: pg.PoolClient,
  id: number,
  fromMs: number,
  toMs: number,
): Promise<MeterQuarters> {
  const touched = `select distinct $1::int as id, d.time_15m as t
    from virtual_meter_terms v join data_15m d on d.meter_id = v.input_id
    where v.virtual_id = $1 and d.time_15m >= $2 and d.time_15m < $3`
  const { rows } = await client.query<MeterQuarters>(
    `select coalesce(array_agg(${EPOCH_MS('t')} order by t), '{}') as t, coalesce(array_agg(id order by t), '{}') as "meterId",
       coalesce(array_agg(avg order by t), '{}') as avg, coalesce(array_agg(min order by t), '{}') as min,
       coalesce(array_agg(max order by t), '{}') as max, coalesce(array_agg(sum order by t), '{}') as sum,
       coalesce(array_agg(count order by t), '{}') as count, coalesce(array_agg(tag order by t), '{}') as tag
     from (select t, id, ${ROW.replace(/\n/g, ' ')} from (${COMPUTED(touched)}) c where complete) as r(t, id, avg, min, max, sum, count, tag)`,
    [id, new Date(fromMs), new Date(toMs)],
  )
  return rows[0] as MeterQuarters
}
