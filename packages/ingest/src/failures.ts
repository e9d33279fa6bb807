/**
 * SQLSTATE classes worth waiting for and writing again: a database that cannot be reached or is
 * going away (08, 53, 57), a transaction rolled back for another's sake (40: a deadlock, a
 * serialization failure). Anything else is a refusal of what was written (22: a value, 23: a
 * constraint...): the message is kept in the quarantine, never written again in vain.
 */
const UNAVAILABLE = /^(08|40|53|57)/

/** Whether a write failed for want of the database (retry), not for what it wrote (quarantine). */
export const unavailable = (error: unknown): boolean => {
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') return UNAVAILABLE.test(code) || /^E[A-Z]+$/.test(code)
  // node-postgres ends a lost connection with a plain error: "Connection terminated unexpectedly", a timeout
  return /connection|terminated|timeout/i.test(error instanceof Error ? error.message : String(error))
}

/** A failure in a few words for a log line or a quarantine reason: its SQLSTATE and message. */
export function describeFailure(error: unknown): string {
  const code = (error as { code?: unknown }).code
  const message = error instanceof Error ? error.message : String(error)
  return `${typeof code === 'string' ? `${code}: ` : ''}${message}`.slice(0, 200)
}
