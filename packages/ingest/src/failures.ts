import type { LiveMessage } from '@campus/energy-data/live'
import type pg from 'pg'

/**
 * SQLSTATE classes worth waiting for and writing again: a database that cannot be reached or is
 * going away (08, 53, 57), a transaction rolled back for another's sake (40: a deadlock, a
 * serialization failure).
 */
const UNAVAILABLE = /^(08|40|53|57)/

/** Whether a write failed for want of the database (retry), not for what it wrote (quarantine). */
export const unavailable = (error: unknown): boolean => {
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') return UNAVAILABLE.test(code) || /^E[A-Z]+$/.test(code)
  // node-postgres ends a lost connection with a plain error: "Connection terminated unexpectedly", a timeout
  return /connection|terminated|timeout/i.test(error instanceof Error ? error.message : String(error))
}

/**
 * A message the database refused alone (an overflow, say): kept whole in the quarantine with why,
 * so it never holds the stream; a redelivery finds it kept.
 */
export async function quarantineWhole(pool: pg.Pool, message: LiveMessage, error: unknown): Promise<void> {
  const code = (error as { code?: string }).code ?? (error instanceof Error ? error.name : 'unknown')
  await pool.query(
    `insert into quarantine (received_at, source, code, reason, record_index, payload)
     values ($1, $2, 'not_written', $3, null, $4)
     on conflict (payload_digest, (coalesce(record_index, -1)), source) where replayed_at is null do nothing`,
    [new Date(message.receivedMs), message.source, `the message could not be written (${code})`, message.payload],
  )
}
