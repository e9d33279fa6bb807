import type pg from 'pg'
import { MIRRORS } from '../catalogue/groups.ts'
import { AMOUNT_METER_IDS, METERS } from '../catalogue/meters.ts'
import { KINDS } from '../catalogue/quantities.ts'
import { type Intake, type LiveMessage, type MeterFacts, type RefusalCode, readMessage } from '../domain/intake.ts'
import { QUARTER_MS } from '../domain/time.ts'
import { measurementsWritten } from './measurement-writes.ts'
import { writeMirrors } from './mirrors.ts'
import { ROLLUP_LOCK } from './rollups.ts'

/**
 * Live samples into quarter hours: the samples a batch of messages gives are stored once each
 * (`meter_samples`, keyed by meter and instant: a redelivery or a replay changes nothing), every
 * quarter hour they touch is folded again from all of its samples (so the order of arrival does
 * not matter), the columns mirroring those meters follow, and what was refused goes to the
 * quarantine; then the one write path's end (rollups, change notice). All in the caller's
 * transaction: a batch is written whole or not at all.
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
async function foldQuarters(client: pg.PoolClient, meterIds: number[], quarters: Date[]): Promise<void> {
  const facts = meterIds.map((id) => METERS.find((m) => m.id === id)!)
  const amount = meterIds.map((id) => AMOUNT_METER_IDS.includes(id))
  const lo = facts.map((m) => KINDS[m.kind].plausible?.min ?? null)
  const hi = facts.map((m) => KINDS[m.kind].plausible?.max ?? null)
  await client.query(
    `with q as (
       select * from unnest($1::int[], $2::timestamptz[], $3::bool[], $4::float8[], $5::float8[]) as q(meter_id, t, amount, lo, hi)
     ),
     s as (
       select q.meter_id, q.t, q.lo, q.hi, x.reading, x.value,
         case when x.reading = 'register' then (
           select p.value from meter_samples p
           where p.meter_id = x.meter_id and p.reading = 'register' and p.at < x.at
           order by p.at desc limit 1) end as previous
       from q join meter_samples x on x.meter_id = q.meter_id and x.at >= q.t and x.at < q.t + interval '15 minutes'
     ),
     v as (
       select meter_id, t, lo, hi,
         case when reading = 'value' then value when previous is null then null
              when value >= previous then value - previous else value end as v,
         reading = 'register' and previous is not null and value < previous as restarted
       from s
     )
     insert into data_15m (time_15m, meter_id, avg_value, min_value, max_value, sum_value, count_value, tag)
     select t, meter_id, avg(v), min(v), max(v), sum(v), count(v),
       case when bool_or(v < lo or v > hi) then 'suspect' when bool_or(restarted) then 'estimated' else 'ok' end
     from v group by t, meter_id having count(v) > 0
     on conflict (meter_id, time_15m) do update set avg_value = excluded.avg_value, min_value = excluded.min_value,
       max_value = excluded.max_value, sum_value = excluded.sum_value, count_value = excluded.count_value,
       tag = excluded.tag`,
    [meterIds, quarters, amount, lo, hi],
  )
  await writeMirrors(client, meterIds, quarters)
}

/**
 * Stores the samples not stored yet, then, under the write lock, the quarter hours to fold again:
 * those of the new samples and of the register readings following a new register reading (its
 * increment changed). Taken after the lock, so a writer that committed meanwhile is seen.
 */
async function storeSamples(
  client: pg.PoolClient,
  intake: Intake['samples'],
): Promise<{ stored: number; touched: Map<string, { meterId: number; quarterMs: number }> }> {
  const touched = new Map<string, { meterId: number; quarterMs: number }>()
  if (intake.length === 0) return { stored: 0, touched }
  // in key order: two writers inserting the same samples wait for each other in one order, never in a cycle
  const { rows } = await client.query<{ meter_id: number; at: Date; reading: string }>(
    `insert into meter_samples (meter_id, at, reading, value)
     select * from unnest($1::int[], $2::timestamptz[], $3::text[], $4::float8[]) as s(meter_id, at, reading, value)
     order by meter_id, at
     on conflict do nothing
     returning meter_id, at, reading`,
    [
      intake.map((s) => s.meterId),
      intake.map((s) => new Date(s.timeMs)),
      intake.map((s) => s.reading),
      intake.map((s) => s.value),
    ],
  )
  if (rows.length === 0) return { stored: 0, touched }
  // two writers folding one quarter hour: each folds after the other's samples are committed
  await client.query('select pg_advisory_xact_lock($1)', [ROLLUP_LOCK])
  const touch = (meterId: number, at: Date) => {
    const quarterMs = Math.floor(at.getTime() / QUARTER_MS) * QUARTER_MS
    touched.set(`${meterId}:${quarterMs}`, { meterId, quarterMs })
  }
  for (const row of rows) touch(row.meter_id, row.at)
  const registers = rows.filter((r) => r.reading === 'register')
  if (registers.length > 0) {
    // a late register reading changes the increment of the one after it
    const next = await client.query<{ meter_id: number; next_at: Date | null }>(
      `select n.meter_id, (
         select min(p.at) from meter_samples p where p.meter_id = n.meter_id and p.reading = 'register' and p.at > n.at
       ) as next_at
       from unnest($1::int[], $2::timestamptz[]) as n(meter_id, at)`,
      [registers.map((r) => r.meter_id), registers.map((r) => r.at)],
    )
    for (const row of next.rows) if (row.next_at) touch(row.meter_id, row.next_at)
  }
  return { stored: rows.length, touched }
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
      quarters.map((q) => new Date(q.quarterMs)),
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
  if (quarters.length > 0) {
    const mirrored = new Set(quarters.map((q) => q.meterId))
    const groups = new Set(MIRRORS.filter((s) => mirrored.has(s.meter!.id)).map((s) => `${s.group}_15m`))
    const times = quarters.map((q) => q.quarterMs)
    await measurementsWritten(client, {
      tables: ['data_15m', ...groups],
      fromMs: Math.min(...times),
      toMs: Math.max(...times) + QUARTER_MS,
    })
  }
  return {
    samples: stored,
    duplicates: samples.length - stored,
    quarantined: quarantine.length,
    quarters: quarters.length,
    refused: quarantine.map((q) => ({ index: q.recordIndex, code: q.code, reason: q.reason })),
  }
}
