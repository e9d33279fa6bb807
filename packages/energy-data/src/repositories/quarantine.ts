import type pg from 'pg'
import type { LiveMessage } from '../domain/intake.ts'
import { type BatchResult, takeMessages } from './sample-writes.ts'
import { inTransaction } from './transaction.ts'

export interface QuarantineRow {
  id: number
  received_at: string
  source: string
  code: string
  reason: string
  record_index: number | null
  /** The message's payload as text, its first PAYLOAD_SHOWN bytes; `quarantine:payload` gives it whole. */
  payload: string
  payload_id: number
  payload_bytes: number
  replayed_at: string | null
}

/** Of a payload, the bytes a listing shows. */
const PAYLOAD_SHOWN = 4096

/** The quarantine, oldest first: the rows not replayed yet, or all of them. */
export async function listQuarantine(
  pool: pg.Pool,
  options: { all?: boolean; limit?: number } = {},
): Promise<QuarantineRow[]> {
  const { rows } = await pool.query<{
    id: string
    received_at: Date
    source: string
    code: string
    reason: string
    record_index: number | null
    head: Buffer
    payload_id: string
    size: number
    replayed_at: Date | null
  }>(
    `select q.id, q.received_at, p.source, q.code, q.reason, q.record_index, substring(p.payload from 1 for $2) as head,
       p.id as payload_id, p.size, q.replayed_at
     from quarantine q join quarantine_payloads p on p.id = q.payload_id
     ${options.all ? '' : 'where q.replayed_at is null'} order by q.id limit $1`,
    [options.limit ?? 1000, PAYLOAD_SHOWN],
  )
  return rows.map((r) => ({
    id: Number(r.id),
    received_at: r.received_at.toISOString(),
    source: r.source,
    code: r.code,
    reason: r.reason,
    record_index: r.record_index,
    payload: r.head.toString('utf8'),
    payload_id: Number(r.payload_id),
    payload_bytes: r.size,
    replayed_at: r.replayed_at?.toISOString() ?? null,
  }))
}

/** A quarantined payload's bytes, as kept; undefined when there is none of that id. */
export async function quarantinedPayload(pool: pg.Pool, id: number): Promise<Buffer | undefined> {
  const { rows } = await pool.query<{ payload: Buffer }>('select payload from quarantine_payloads where id = $1', [id])
  return rows[0]?.payload
}

export interface ReplayResult extends Omit<BatchResult, 'messages'> {
  /** Quarantine rows replayed (taken now, or quarantined again with today's reason). */
  replayed: number
}

/**
 * Takes quarantined rows again (after the cause was fixed: a meter added, its dates corrected):
 * each row's payload (or its one record) goes through the write path as when it first came, at the
 * time it first came (relative SenML times and the age bounds as then), with the datalogger its
 * topic named. The row is marked replayed; what is still refused is quarantined again, with the
 * reason of now. One transaction.
 */
export async function replayQuarantine(pool: pg.Pool, ids: readonly number[] | 'all'): Promise<ReplayResult> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{
      id: string
      received_at: Date
      source: string
      datalogger: string | null
      record_index: number | null
      payload: Buffer
    }>(
      `select q.id, p.received_at, p.source, p.datalogger, q.record_index, p.payload
       from quarantine q join quarantine_payloads p on p.id = q.payload_id
       where q.replayed_at is null ${ids === 'all' ? '' : 'and q.id = any($1::bigint[])'} order by q.id for update of q`,
      ids === 'all' ? [] : [ids],
    )
    const messages: LiveMessage[] = rows.map((r) => ({
      source: r.source,
      payload: r.payload,
      receivedMs: r.received_at.getTime(),
      // the topic named a datalogger (or none); over HTTP any meter
      ...(r.source.startsWith('mqtt:') ? { datalogger: r.datalogger } : {}),
      ...(r.record_index === null ? {} : { onlyRecord: r.record_index }),
    }))
    // marked first: what is refused again is kept again, as a row of its own
    await client.query('update quarantine set replayed_at = now() where id = any($1::bigint[])', [
      rows.map((r) => r.id),
    ])
    const { messages: _each, ...result } = await takeMessages(client, messages)
    return { ...result, replayed: rows.length }
  })
}

/** Deletes what was quarantined before `beforeMs` (INGEST_QUARANTINE_RETENTION_DAYS); the payloads deleted. */
export async function purgeQuarantine(pool: pg.Pool, beforeMs: number): Promise<number> {
  const { rowCount } = await pool.query('delete from quarantine_payloads where received_at < $1', [new Date(beforeMs)])
  return rowCount ?? 0
}
