/**
 * One log line per quarantine reason and datalogger, at most once a minute each (how many more
 * came meanwhile is said on the next line): a datalogger with a mistyped meter or a wrong unit is
 * seen on the console of `npm start`, where the user is looking, without one line per record.
 */
export const NOTICE_INTERVAL_MS = 60_000

export class QuarantineNotices {
  private readonly last = new Map<string, { at: number; held: number }>()
  private readonly warn: (o: object, m: string) => void
  private readonly intervalMs: number

  constructor(warn: (o: object, m: string) => void, intervalMs = NOTICE_INTERVAL_MS) {
    this.warn = warn
    this.intervalMs = intervalMs
  }

  /** A refusal of a record from `datalogger` (or a source without one). */
  refused(datalogger: string, code: string, reason: string, now = Date.now()): void {
    const key = `${datalogger}\u0000${code}`
    const seen = this.last.get(key)
    if (seen && now - seen.at < this.intervalMs) {
      seen.held++
      return
    }
    if (this.last.size > 10_000) this.last.clear()
    const more = seen?.held ? ` (and ${seen.held} more since the last notice)` : ''
    this.last.set(key, { at: now, held: 0 })
    this.warn({ datalogger, code, reason }, `quarantine: ${datalogger}: ${code}: ${reason}${more}`)
  }
}
