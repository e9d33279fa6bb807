import type pg from 'pg'
import { AMOUNT_METER_IDS, METERS } from '../catalogue/meters.ts'
import { KINDS } from '../catalogue/quantities.ts'
import { type Intake, type LiveMessage, type MeterFacts, type RefusalCode, readMessage } from '../domain/intake.ts'
import { QUARTER_MS } from '../domain/time.ts'
import { EPOCH_MS } from './measurements.ts'
import { type MeterQuarters, writeQuarters } from './quarter-writes.ts'
import { ROLLUP_LOCK } from './rollups.ts'

/**
 * Live samples into quarter hours: the samples a batch of messages gives are stored once each
 * (`meter_samples`, keyed by meter and instant: a redelivery or a replay changes nothing), every
 * quarter hour they touch is folded again from all of its samples (so the order of arrival does
 * not matter) and written by the one write path (`writeQuarters`: mirrored columns, rollups,
 * change notice), and what was refused goes to the quarantine. All in the caller's transaction:
 * a batch is written whole or not at all.
 */

export interface BatchResult {
  /** Samples stored. */
  samples: number
  /** Samples already stored (same meter and instant): counted once. */
  duplicates: number
  /** Quarantine rows written. */
  quarantined: number
  /** Quarter hours folded again. */
  quarters: number
  /** The quarantine rows: record index (null: the whole payload), reason class and words. */
  refused: Array<{ index: number | null; code: RefusalCode; reason: string }>
}

/** The meters samples may be taken for: the catalogue's kind and unit, the database's dates and datalogger. */
export async function meterFacts(client: pg.PoolClient): Promise<Map<number, MeterFacts>> {
  const { rows } = await client.query<{
    id: number
    datalogger_id: string
    date_from: Date | null
    date_to: Date | null
  }>('select id, datalogger_id, date_from, date_to from meters')
  const facts = new Map<number, MeterFacts>()
  for (const row of rows) {
    const entry = METERS.find((m) => m.id === row.id)
    if (!entry) continue
    facts.set(row.id, {
      id: row.id,
      datalogger: row.datalogger_id,
      kind: entry.kind,
      unit: KINDS[entry.kind].unit,
      fromMs: row.date_from?.getTime() ?? null,
      toMs: row.date_to?.getTime() ?? null,
    })
  }
  return facts
}

/**
 * Folds the quarter hours `(meterIds[i], quarters[i])` from their samples: the tag rules of
 * docs/LIVE.md. An amount meter's sample is an increment: a `value` reading as sent, a `register`
 * reading minus the register's previous reading (none before it: no increment; lower than it: the
 * register restarted, the increment is the reading itself and the quarter is `estimated`).
 */
async function foldQuarters(client: pg.PoolClient, meterIds: number[], quarters: number[]): Promise<void> {
  const facts = meterIds.map((id) => METERS.find((m) => m.id === id)!)
  const amount = meterIds.map((id) => AMOUNT_METER_IDS.includes(id))
  const lo = facts.map((m) => KINDS[m.kind].plausible?.min ?? null)
  const hi = facts.map((m) => KINDS[m.kind].plausible?.max ?? null)
  // the folded quarter hours come back as the columns the write path takes (`MeterQuarters`)
  const { rows } = await client.query<MeterQuarters>(
    `with q as (
       select meter_id, to_timestamp(ms / 1000) as t, amount, lo, hi
       from unnest($1::int[], $2::float8[], $3::bool[], $4::float8[], $5::float8[]) as q(meter_id, ms, amount, lo, hi)
     ),
     s as (
       select q.meter_id, q.t, q.lo, q.hi, x.reading, x.value, p.value as previous
       from q join meter_samples x on x.meter_id = q.meter_id and x.at >= q.t and x.at < q.t + interval '15 minutes'
       -- a join, not a subquery in an expression: the planner would copy that into every use of it
       left join lateral (
         select p.value from meter_samples p
         where x.reading = 'register' and p.meter_id = x.meter_id and p.reading = 'register' and p.at < x.at
         order by p.at desc limit 1
       ) p on true
     ),
     v as (
       select meter_id, t, lo, hi,
         case when reading = 'value' then value when previous is null then null
              when value >= previous then value - previous else value end as v,
         reading = 'register' and previous is not null and value < previous as restarted
       from s
     ),
     f as (
       select ${EPOCH_MS('t')} as t, meter_id, avg(v) as avg, min(v) as min, max(v) as max, sum(v) as sum,
         count(v)::int as count,
         case when bool_or(v < lo or v > hi) then 'suspect' when bool_or(restarted) then 'estimated' else 'ok' end as tag
       from v group by t, meter_id having count(v) > 0
     )
     select coalesce(array_agg(t), '{}') as t, coalesce(array_agg(meter_id), '{}') as "meterId",
       coalesce(array_agg(avg), '{}') as avg, coalesce(array_agg(min), '{}') as min,
       coalesce(array_agg(max), '{}') as max, coalesce(array_agg(sum), '{}') as sum,
       coalesce(array_agg(count), '{}') as count, coalesce(array_agg(tag), '{}') as tag
     from f`,
    [meterIds, quarters, amount, lo, hi],
  )
  await writeQuarters(client, { meters: rows[0] as MeterQuarters, existing: 'replace' })
}

/**
 * Stores the samples not stored yet, then, when any was new, under the write lock, the quarter
 * hours to fold again: those of the batch's samples and of the register readings following one of
 * its register readings (its increment may have changed). Taken after the lock, so a writer that
 * committed meanwhile is seen. Folding the quarter of a sample that was already stored changes
 * nothing, so the new samples need not be named back (`returning`).
 */
async function storeSamples(
  client: pg.PoolClient,
  intake: Intake['samples'],
): Promise<{ stored: number; touched: Map<string, { meterId: number; quarterMs: number }> }> {
  const touched = new Map<string, { meterId: number; quarterMs: number }>()
  if (intake.length === 0) return { stored: 0, touched }
  // in key order: two writers inserting the same samples wait for each other in one order, never in a cycle.
  // Instants travel as epoch milliseconds (whole, as a Date holds them): a number is read and
  // written faster than a timestamp's text, on both sides
  const { rowCount } = await client.query(
    `insert into meter_samples (meter_id, at, reading, value)
     select meter_id, to_timestamp(ms / 1000), reading, value
     from unnest($1::int[], $2::float8[], $3::text[], $4::float8[]) as s(meter_id, ms, reading, value)
     order by meter_id, ms
     on conflict do nothing`,
    [
      intake.map((s) => s.meterId),
      intake.map((s) => Math.trunc(s.timeMs)),
      intake.map((s) => s.reading),
      intake.map((s) => s.value),
    ],
  )
  const stored = rowCount ?? 0
  if (stored === 0) return { stored, touched }
  // two writers folding one quarter hour: each folds after the other's samples are committed
  await client.query('select pg_advisory_xact_lock($1)', [ROLLUP_LOCK])
  const touch = (meterId: number, atMs: number) => {
    const quarterMs = Math.floor(atMs / QUARTER_MS) * QUARTER_MS
    touched.set(`${meterId}:${quarterMs}`, { meterId, quarterMs })
  }
  for (const sample of intake) touch(sample.meterId, sample.timeMs)
  const registers = intake.filter((r) => r.reading === 'register')
  if (registers.length > 0) {
    // a late register reading changes the increment of the one after it
    const next = await client.query<{ meter_id: number; next_at: Date | null }>(
      `select n.meter_id, (
         select min(p.at) from meter_samples p where p.meter_id = n.meter_id and p.reading = 'register' and p.at > n.at
       ) as next_at
       from unnest($1::int[], $2::timestamptz[]) as n(meter_id, at)`,
      [registers.map((r) => r.meterId), registers.map((r) => new Date(Math.trunc(r.timeMs)))],
    )
    for (const row of next.rows) if (row.next_at) touch(row.meter_id, row.next_at.getTime())
  }
  return { stored, touched }
}

/** A batch of messages taken in the caller's transaction: samples, quarter hours, mirrors, quarantine, rollups. */
export async function takeMessages(
  client: pg.PoolClient,
  messages: readonly LiveMessage[],
  options: { maxFutureMs?: number } = {},
): Promise<BatchResult> {
  const facts = await meterFacts(client)
  const samples: Intake['samples'] = []
  const quarantine: Array<{ message: LiveMessage; recordIndex: number | null; code: RefusalCode; reason: string }> = []
  for (const message of messages) {
    const intake = readMessage(message, facts, options.maxFutureMs)
    samples.push(...intake.samples)
    for (const r of intake.refused) quarantine.push({ message, ...r })
  }
  const { stored, touched } = await storeSamples(client, samples)
  const quarters = [...touched.values()]
  if (quarters.length > 0) {
    await foldQuarters(
      client,
      quarters.map((q) => q.meterId),
      quarters.map((q) => q.quarterMs),
    )
  }
  if (quarantine.length > 0) {
    await client.query(
      `insert into quarantine (received_at, source, code, reason, record_index, payload)
       select * from unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[])
       on conflict (payload_digest, (coalesce(record_index, -1)), source) where replayed_at is null do nothing`,
      [
        quarantine.map((q) => new Date(q.message.receivedMs)),
        quarantine.map((q) => q.message.source),
        quarantine.map((q) => q.code),
        quarantine.map((q) => q.reason),
        quarantine.map((q) => q.recordIndex),
        quarantine.map((q) => q.message.payload),
      ],
    )
  }
  return {
    samples: stored,
    duplicates: samples.length - stored,
    quarantined: quarantine.length,
    quarters: quarters.length,
    refused: quarantine.map((q) => ({ index: q.recordIndex, code: q.code, reason: q.reason })),
  }
}
