import type pg from 'pg'
import { METERS } from '../catalogue/meters.ts'
import { KINDS } from '../catalogue/quantities.ts'
import {
  DEFAULT_INTAKE_LIMITS,
  type IntakeLimits,
  judgeMessage,
  type LiveMessage,
  type MeterFacts,
  namedMeters,
  type RefusalCode,
  type Refused,
  type ResolvedMessage,
  resolveMessage,
  type TakenSample,
} from '../domain/intake.ts'
import {
  addSample,
  type Contribution,
  emptyContribution,
  extendable,
  mergeQuarter,
  type QuarterStats,
  registerSteps,
} from '../domain/quarter-fold.ts'
import { QUARTER_MS } from '../domain/time.ts'
import { binaryArray } from './binary-arrays.ts'
import { quarantineRefusals } from './quarantine-writes.ts'
import { finishQuarterWrites, quarterKey, readQuarters } from './quarter-writes.ts'
import type { MeterChange } from './rollup-deltas.ts'
import { monthsOf } from './sample-partitions.ts'
import { lockForWrite } from './write-locks.ts'

/**
 * Live samples into quarter hours (docs/LIVE.md): the samples of a batch of messages are stored
 * once each (`meter_samples`, keyed by meter and instant), and only those the insert actually
 * stored change their quarter hours - by what they bring (domain/quarter-fold.ts), so the cost of
 * a sample does not grow with what is stored. A register reading that arrives after a later one
 * changes the next reading's increment: the quarter hours of such readings are folded again from
 * their samples, bounded by one quarter hour's samples each. The one write path (`writeQuarters`'s
 * end) then stores them with their mirrors, rollups and change notice; what was refused goes to the
 * quarantine. All in the caller's transaction: a batch is written whole or not at all.
 */

/** What became of one message of a batch. */
export interface MessageResult {
  /** Samples stored. */
  samples: number
  /** Samples already stored (same meter and instant): counted once. */
  duplicates: number
  /** The quarantine rows: record index (null: the whole payload), reason class and words. */
  refused: Array<{ index: number | null; code: RefusalCode; reason: string }>
}

export interface BatchResult extends MessageResult {
  /** Refusals of the batch (kept once in the quarantine, however often a message comes). */
  quarantined: number
  /** Quarter hours changed. */
  quarters: number
  /** Each message's part, in the order given. */
  messages: MessageResult[]
}

/** The facts of the meters named (those the database knows), read in the writing transaction. */
async function meterFacts(client: pg.PoolClient, ids: readonly number[]): Promise<Map<number, MeterFacts>> {
  const facts = new Map<number, MeterFacts>()
  if (ids.length === 0) return facts
  const { rows } = await client.query<{
    id: number
    datalogger_id: string
    from_ms: number | null
    to_ms: number | null
    live_ms: number | null
  }>(
    `select id, datalogger_id, extract(epoch from date_from)::float8 * 1000 as from_ms,
       extract(epoch from date_to)::float8 * 1000 as to_ms, extract(epoch from live_from)::float8 * 1000 as live_ms
     from meters where id = any($1::int[])`,
    [ids],
  )
  for (const row of rows) {
    const entry = METERS.find((m) => m.id === row.id)
    if (!entry) continue
    facts.set(row.id, {
      id: row.id,
      datalogger: row.datalogger_id,
      kind: entry.kind,
      unit: KINDS[entry.kind].unit,
      fromMs: row.from_ms,
      toMs: row.to_ms,
      liveFromMs: row.live_ms,
    })
  }
  return facts
}

const plausibleOfMeter = (meterId: number) =>
  KINDS[(METERS.find((m) => m.id === meterId) as (typeof METERS)[number]).kind].plausible

const sampleKey = (meterId: number, us: number): string => `${meterId}@${us}`
const quarterOf = (us: number): number => Math.floor(us / 1000 / QUARTER_MS) * QUARTER_MS

/**
 * The samples in key order (meter, then instant), each instant of a meter once: the first sent.
 * A pack's records of a meter come in time order, so a meter's samples are sorted only when they
 * do not: the batch is grouped by meter (counted, then placed: one index array for the batch).
 */
function inKeyOrder(
  samples: readonly TakenSample[],
  owners: readonly number[],
): { samples: TakenSample[]; owners: number[] } {
  const counts = new Map<number, number>()
  for (let i = 0; i < samples.length; i++) {
    const meterId = (samples[i] as TakenSample).meterId
    counts.set(meterId, (counts.get(meterId) ?? 0) + 1)
  }
  const meters = [...counts.keys()].sort((a, b) => a - b)
  const start = new Map<number, number>()
  let offset = 0
  for (const meterId of meters) {
    start.set(meterId, offset)
    offset += counts.get(meterId) as number
  }
  const order = new Int32Array(samples.length)
  const cursor = new Map(start)
  for (let i = 0; i < samples.length; i++) {
    const meterId = (samples[i] as TakenSample).meterId
    const at = cursor.get(meterId) as number
    order[at] = i
    cursor.set(meterId, at + 1)
  }
  const timeOf = (i: number) => (samples[i] as TakenSample).timeUs
  const ordered = { samples: [] as TakenSample[], owners: [] as number[] }
  for (const meterId of meters) {
    const from = start.get(meterId) as number
    const to = from + (counts.get(meterId) as number)
    for (let k = from + 1; k < to; k++) {
      if (timeOf(order[k] as number) >= timeOf(order[k - 1] as number)) continue
      order.subarray(from, to).sort((a, b) => timeOf(a) - timeOf(b) || a - b)
      break
    }
    let last: number | undefined
    for (let k = from; k < to; k++) {
      const i = order[k] as number
      if (timeOf(i) === last) continue
      last = timeOf(i)
      ordered.samples.push(samples[i] as TakenSample)
      ordered.owners.push(owners[i] as number)
    }
  }
  return ordered
}

/**
 * From this many samples a batch is first inserted without `on conflict` in a savepoint: a plain
 * insert costs about 60 % of one that checks each row for a conflict (1.9 against 3.2 us a row
 * here), worth the savepoint's two round trips only on a large batch. A duplicate (a message
 * delivered again) rolls it back and the checking insert runs instead.
 */
const PLAIN_INSERT_FROM = 2000

const UNIQUE_VIOLATION = '23505'

/**
 * Stores the samples not stored yet (given in key order: two writers inserting the same samples
 * wait for each other in one order); the keys of those it stored, or `all` when it stored every
 * one (the usual case: then no key comes back, one row instead of one per sample).
 */
async function storeSamples(client: pg.PoolClient, sorted: readonly TakenSample[]): Promise<Set<string> | 'all'> {
  const n = sorted.length
  const at = (i: number) => sorted[i] as TakenSample
  const params = [
    binaryArray('int4', n, (i) => at(i).meterId),
    binaryArray('int8', n, (i) => at(i).timeUs),
    binaryArray('bool', n, (i) => at(i).reading === 'register'),
    binaryArray('float8', n, (i) => at(i).value),
  ]
  const insert = `insert into meter_samples (meter_id, at, reading, value)
     select meter_id, timestamptz 'epoch' + us * interval '1 microsecond',
       case when register then 'register' else 'value' end, value
     from unnest($1::int[], $2::int8[], $3::bool[], $4::float8[]) as s(meter_id, us, register, value)`
  if (sorted.length >= PLAIN_INSERT_FROM) {
    await client.query('savepoint plain_samples')
    try {
      await client.query(insert, params)
      await client.query('release savepoint plain_samples')
      return 'all'
    } catch (error) {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error
      await client.query('rollback to savepoint plain_samples')
    }
  }
  const { rows } = await client.query<{ stored: number; meter_ids: number[] | null; us: string[] | null }>(
    `with stored as (${insert} on conflict do nothing returning meter_id, at)
     select count(*)::int as stored,
       case when count(*) < $5 then array_agg(meter_id) end as meter_ids,
       case when count(*) < $5 then array_agg((extract(epoch from at) * 1000000)::int8::text) end as us
     from stored`,
    [...params, sorted.length],
  )
  const row = rows[0] as { stored: number; meter_ids: number[] | null; us: string[] | null }
  if (row.stored === sorted.length) return 'all'
  const ids = row.meter_ids ?? []
  const us = row.us ?? []
  return new Set(ids.map((id, i) => sampleKey(id, Number(us[i]))))
}

/** Each meter's last register reading before this batch (meter_latest). */
async function lastRegisters(
  client: pg.PoolClient,
  meterIds: readonly number[],
): Promise<Map<number, { us: number; value: number }>> {
  const { rows } = await client.query<{ meter_id: number; us: string; value: number }>(
    `select meter_id, (extract(epoch from register_at) * 1000000)::int8::text as us, register_value as value
     from meter_latest where meter_id = any($1::int[]) and register_at is not null`,
    [meterIds],
  )
  return new Map(rows.map((r) => [r.meter_id, { us: Number(r.us), value: r.value }]))
}

/** The quarter hours of the stored register readings following each of these (a late reading changes their increment). */
async function followingRegisters(
  client: pg.PoolClient,
  readings: ReadonlyArray<{ meterId: number; timeUs: number }>,
): Promise<Array<{ meterId: number; us: number }>> {
  const { rows } = await client.query<{ meter_id: number; us: string | null }>(
    `select n.meter_id, (
       select (extract(epoch from min(p.at)) * 1000000)::int8::text from meter_samples p
       where p.meter_id = n.meter_id and p.reading = 'register' and p.at > timestamptz 'epoch' + n.us * interval '1 microsecond'
     ) as us
     from unnest($1::int[], $2::int8[]) as n(meter_id, us)`,
    [readings.map((r) => r.meterId), readings.map((r) => r.timeUs)],
  )
  return rows.filter((r) => r.us !== null).map((r) => ({ meterId: r.meter_id, us: Number(r.us) }))
}

/**
 * Folds the quarter hours `keys` again from all their samples (the tag rules of docs/LIVE.md), one
 * quarter hour's samples each: a register reading's increment is the reading minus the register's
 * previous reading (none: no increment; lower: the register restarted, the reading itself).
 */
async function refold(
  client: pg.PoolClient,
  keys: ReadonlyArray<{ meterId: number; t: number }>,
): Promise<Map<string, QuarterStats>> {
  const out = new Map<string, QuarterStats>()
  if (keys.length === 0) return out
  const kinds = keys.map((k) => KINDS[(METERS.find((m) => m.id === k.meterId) as (typeof METERS)[number]).kind])
  const { rows } = await client.query<QuarterStats & { meter_id: number; t: number }>(
    `with q as (
       select meter_id, to_timestamp(ms / 1000) as t, lo, hi
       from unnest($1::int[], $2::float8[], $3::float8[], $4::float8[]) as q(meter_id, ms, lo, hi)
     ),
     v as (
       select q.meter_id, q.t, q.lo, q.hi,
         case when x.reading = 'value' then x.value when p.value is null then null
              when x.value >= p.value then x.value - p.value else x.value end as v,
         x.reading = 'register' and p.value is not null and x.value < p.value as restarted
       from q
       cross join lateral (
         select reading, value, at from meter_samples x
         where x.meter_id = q.meter_id and x.at >= q.t and x.at < q.t + interval '15 minutes' offset 0
       ) x
       left join lateral (
         select p.value from meter_samples p
         where x.reading = 'register' and p.meter_id = q.meter_id and p.reading = 'register' and p.at < x.at
         order by p.at desc limit 1
       ) p on true
     )
     select meter_id, extract(epoch from t)::float8 * 1000 as t, sum(v) / count(v) as avg, min(v) as min,
       max(v) as max, sum(v) as sum, count(v)::int as count,
       case when bool_or(v < lo or v > hi) then 'suspect' when bool_or(restarted) then 'estimated' else 'ok' end as tag
     from v group by meter_id, t having count(v) > 0`,
    [
      keys.map((k) => k.meterId),
      keys.map((k) => k.t),
      kinds.map((k) => k.plausible?.min ?? null),
      kinds.map((k) => k.plausible?.max ?? null),
    ],
  )
  for (const r of rows) out.set(quarterKey(r.meter_id, r.t), r)
  return out
}

/** Each meter's newest sample of the batch, and newest register reading, into meter_latest. */
async function noteLatest(
  client: pg.PoolClient,
  stored: readonly TakenSample[],
  receivedMs: (k: number) => number,
): Promise<void> {
  const latest = new Map<number, { at: TakenSample; register?: TakenSample; receivedMs: number }>()
  stored.forEach((s, k) => {
    let l = latest.get(s.meterId)
    if (!l) {
      l = { at: s, receivedMs: receivedMs(k) }
      latest.set(s.meterId, l)
    }
    if (s.timeUs > l.at.timeUs) l.at = s
    if (s.reading === 'register' && (!l.register || s.timeUs > l.register.timeUs)) l.register = s
    l.receivedMs = Math.max(l.receivedMs, receivedMs(k))
  })
  const rows = [...latest.entries()].sort(([a], [b]) => a - b)
  await client.query(
    `insert into meter_latest (meter_id, at, value, reading, received_at, register_at, register_value)
     select m, timestamptz 'epoch' + us * interval '1 microsecond', v, r, to_timestamp(rec / 1000),
       timestamptz 'epoch' + rus * interval '1 microsecond', rv
     from unnest($1::int[], $2::int8[], $3::float8[], $4::text[], $5::float8[], $6::int8[], $7::float8[])
       as u(m, us, v, r, rec, rus, rv)
     on conflict (meter_id) do update set
       at = greatest(meter_latest.at, excluded.at),
       value = case when excluded.at > meter_latest.at then excluded.value else meter_latest.value end,
       reading = case when excluded.at > meter_latest.at then excluded.reading else meter_latest.reading end,
       received_at = greatest(meter_latest.received_at, excluded.received_at),
       register_at = greatest(meter_latest.register_at, excluded.register_at),
       register_value = case when excluded.register_at > coalesce(meter_latest.register_at, '-infinity')
         then excluded.register_value else meter_latest.register_value end`,
    [
      rows.map(([id]) => id),
      rows.map(([, l]) => l.at.timeUs),
      rows.map(([, l]) => l.at.value),
      rows.map(([, l]) => l.at.reading),
      rows.map(([, l]) => l.receivedMs),
      rows.map(([, l]) => l.register?.timeUs ?? null),
      rows.map(([, l]) => l.register?.value ?? null),
    ],
  )
}

/**
 * The quarter hours the stored samples change, before and after: what each brings, added to its
 * quarter hour where the row can be extended; folded again from its samples where it cannot (a
 * late register reading, a row a seed or an import wrote).
 */
async function quarterChanges(client: pg.PoolClient, stored: readonly TakenSample[]): Promise<MeterChange[]> {
  const contributions = new Map<string, { meterId: number; t: number; c: Contribution }>()
  const again = new Map<string, { meterId: number; t: number }>()
  const refoldQuarter = (meterId: number, us: number) => {
    const t = quarterOf(us)
    again.set(quarterKey(meterId, t), { meterId, t })
  }
  const plausible = new Map<number, ReturnType<typeof plausibleOfMeter>>()
  const plausibleOf = (meterId: number) => {
    if (!plausible.has(meterId)) plausible.set(meterId, plausibleOfMeter(meterId))
    return plausible.get(meterId)
  }
  // in key order, a quarter hour's samples come one after the other: its entry is looked up once
  let current: { meterId: number; t: number; c: Contribution } | undefined
  const add = (meterId: number, us: number, value: number, restarted: boolean) => {
    const t = quarterOf(us)
    if (current?.meterId !== meterId || current.t !== t) {
      const key = quarterKey(meterId, t)
      current = contributions.get(key) ?? { meterId, t, c: emptyContribution() }
      contributions.set(key, current)
    }
    addSample(current.c, value, plausibleOf(meterId), restarted)
  }
  const registers = new Map<number, TakenSample[]>()
  for (let k = 0; k < stored.length; k++) {
    const s = stored[k] as TakenSample
    if (s.reading === 'value') add(s.meterId, s.timeUs, s.value, false)
    else {
      const readings = registers.get(s.meterId)
      if (readings) readings.push(s)
      else registers.set(s.meterId, [s])
    }
  }
  if (registers.size > 0) {
    const last = await lastRegisters(client, [...registers.keys()])
    const late: TakenSample[] = []
    for (const [meterId, readings] of registers) {
      readings.sort((a, b) => a.timeUs - b.timeUs)
      const before = last.get(meterId)
      if (before && (readings[0] as TakenSample).timeUs < before.us) {
        late.push(...readings)
        continue
      }
      for (const step of registerSteps(readings, before?.value)) {
        if (step.increment !== null) add(meterId, step.timeUs, step.increment, step.restarted)
      }
    }
    if (late.length > 0) {
      for (const r of late) refoldQuarter(r.meterId, r.timeUs)
      for (const f of await followingRegisters(client, late)) refoldQuarter(f.meterId, f.us)
    }
  }
  for (const key of again.keys()) contributions.delete(key)
  const keys = [...contributions.values(), ...again.values()]
  const old = await readQuarters(
    client,
    keys.map((k) => k.meterId),
    keys.map((k) => k.t),
  )
  const changes: MeterChange[] = []
  for (const [key, { meterId, t, c }] of contributions) {
    const before = old.get(key)
    if (before && !extendable(before)) again.set(key, { meterId, t })
    else changes.push({ meterId, t, old: before ?? null, next: mergeQuarter(before, c) })
  }
  const folded = await refold(client, [...again.values()])
  for (const [key, { meterId, t }] of again) {
    const next = folded.get(key)
    if (next) changes.push({ meterId, t, old: old.get(key) ?? null, next })
  }
  return changes
}

/**
 * A batch of messages taken in the caller's transaction: samples, quarter hours, mirrors, rollups,
 * the quarantine. Messages may come read already (`resolveMessage`, as they arrived).
 */
export async function takeMessages(
  client: pg.PoolClient,
  messages: ReadonlyArray<LiveMessage | ResolvedMessage>,
  options: Partial<IntakeLimits> = {},
): Promise<BatchResult> {
  const limits = { ...DEFAULT_INTAKE_LIMITS, ...options }
  const resolved = messages.map((m) => ('samples' in m ? m : resolveMessage(m, limits.maxBytes)))
  const facts = await meterFacts(client, namedMeters(resolved))
  const intakes = resolved.map((r) => judgeMessage(r, facts, limits))
  // the first of a meter's instant in the batch is the one taken (owned by its message); the others are duplicates
  const all: TakenSample[] = []
  const allOwners: number[] = []
  // indexed loops on the per-sample paths: a function run once a batch is seldom optimized, and
  // its for-of loops then make an iterator result per element
  intakes.forEach((intake, i) => {
    for (let k = 0; k < intake.samples.length; k++) {
      all.push(intake.samples[k] as TakenSample)
      allOwners.push(i)
    }
  })
  const taken = inKeyOrder(all, allOwners)
  let fresh = taken
  let quarters = 0
  if (taken.samples.length > 0) {
    const meters: number[] = []
    for (let k = 0; k < taken.samples.length; k++) {
      const meterId = (taken.samples[k] as TakenSample).meterId
      if (meters.at(-1) !== meterId) meters.push(meterId)
    }
    await lockForWrite(
      client,
      meters,
      monthsOf(taken.samples.length, (i) => (taken.samples[i] as TakenSample).timeUs),
    )
    const stored = await storeSamples(client, taken.samples)
    if (stored !== 'all') {
      fresh = { samples: [], owners: [] }
      taken.samples.forEach((s, k) => {
        if (!stored.has(sampleKey(s.meterId, s.timeUs))) return
        fresh.samples.push(s)
        fresh.owners.push(taken.owners[k] as number)
      })
    }
    if (fresh.samples.length > 0) {
      const changes = await quarterChanges(client, fresh.samples)
      quarters = changes.length
      await finishQuarterWrites(client, changes, undefined, { live: true })
      await noteLatest(
        client,
        fresh.samples,
        (k) => (resolved[fresh.owners[k] as number] as ResolvedMessage).message.receivedMs,
      )
    }
  }
  const refusals = intakes.map((intake, i) => ({
    message: (resolved[i] as ResolvedMessage).message,
    refused: intake.refused,
  }))
  await quarantineRefusals(client, refusals)
  const mine = intakes.map(() => 0)
  for (const owner of fresh.owners) mine[owner] = (mine[owner] as number) + 1
  const perMessage = intakes.map(
    (intake, i): MessageResult => ({
      samples: mine[i] as number,
      duplicates: intake.samples.length - (mine[i] as number),
      refused: intake.refused.map((r: Refused) => ({ index: r.recordIndex, code: r.code, reason: r.reason })),
    }),
  )
  const refused = perMessage.flatMap((m) => m.refused)
  return {
    samples: fresh.samples.length,
    duplicates: perMessage.reduce((a, m) => a + m.duplicates, 0),
    quarantined: refused.length,
    quarters,
    refused,
    messages: perMessage,
  }
}
