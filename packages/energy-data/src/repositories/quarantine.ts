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
  payload: string
  replayed_at: string | null
}

/** The quarantine, oldest first: the rows not replayed yet, or all of them. */
export async function listQuarantine(
  pool: pg.Pool,
  options: { all?: boolean; limit?: number } = {},
): Promise<QuarantineRow[]> {
  const { rows } = await pool.query<QuarantineRow & { received_at: Date; replayed_at: Date | null; id: string }>(
    `select id, received_at, source, code, reason, record_index, payload, replayed_at from quarantine
     ${options.all ? '' : 'where replayed_at is null'} order by id limit $1`,
    [options.limit ?? 1000],
  )
  return rows.map((r) => ({
    ...r,
    id: Number(r.id),
    received_at: r.received_at.toISOString(),
    replayed_at: r.replayed_at?.toISOString() ?? null,
  }))
}

export interface ReplayResult extends BatchResult {
  /** Quarantine rows replayed (taken now, or quarantined again with today's reason). */
  replayed: number
}

/**
 * Takes quarantined rows again (after the cause was fixed: a meter added, its dates corrected):
 * each row's payload (or its one record) goes through the write path as when it first came, at the
 * time it first came (relative SenML times and the future bound as then). The row is marked
 * replayed; what is still refused is quarantined again, with the reason of now. One transaction.
 */
export async function replayQuarantine(pool: pg.Pool, ids: readonly number[] | 'all'): Promise<ReplayResult> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{
      id: string
      received_at: Date
      source: string
      record_index: number | null
      payload: string
    }>(
      `select id, received_at, source, record_index, payload from quarantine
       where replayed_at is null ${ids === 'all' ? '' : 'and id = any($1::bigint[])'} order by id for update`,
      ids === 'all' ? [] : [ids],
    )
    const messages: LiveMessage[] = rows.map((r) => ({
      source: `replay:${r.id}`,
      payload: r.payload,
      receivedMs: r.received_at.getTime(),
      // the topic named a datalogger; replayed records keep that rule
      ...(datalogger(r.source) ? { datalogger: datalogger(r.source) } : {}),
      ...(r.record_index === null ? {} : { onlyRecord: r.record_index }),
    }))
    // marked first: what is refused again is kept again, as a row of its own
    await client.query('update quarantine set replayed_at = now() where id = any($1::bigint[])', [
      rows.map((r) => r.id),
    ])
    const result = await takeMessages(client, messages)
    return { ...result, replayed: rows.length }
  })
}

const TOPIC_SOURCE = /^mqtt:[^/]+\/([^/]+)\/senml$/
const datalogger = (source: string): string | undefined => TOPIC_SOURCE.exec(source)?.[1]
