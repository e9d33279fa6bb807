/** PostgreSQL's verdicts on a transaction that lost to another, not on what it asked: deadlock_detected, serialization_failure. */
const CONFLICTS = new Set(['40P01', '40001'])

export function isConflict(error: unknown): boolean {
  return typeof error === 'object' && error !== null && CONFLICTS.has(String((error as { code?: unknown }).code))
}

/**
 * Runs a transaction (or a statement) again when PostgreSQL ended it for a conflict with another
 * one, two whose row locks crossed, say: nothing of the lost attempt happened, and the next one
 * sees what the other committed. At most `attempts` tries; any other error goes up at once.
 */
export async function retryingConflicts<T>(run: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (error) {
      if (attempt >= attempts || !isConflict(error)) throw error
    }
  }
}
