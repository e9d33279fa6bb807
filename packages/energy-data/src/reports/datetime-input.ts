import { localMidnight, localToInstant } from './zoned-time.ts'

/**
 * Accepted spellings of a report bound: a local date (`2025-10-26`), a local date-time with a
 * `T` or a space (`2025-10-26T08:00`, `2025-10-26 08:00:00`), or either date-time with an
 * explicit offset (`Z`, `+01:00`, `+0100`). Without an offset the time is wall-clock time in
 * the request's zone.
 */
export const DATETIME_PATTERN =
  '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?(Z|z|[+-]\\d{2}:?\\d{2})?)?$'

const PARSE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|z|[+-]\d{2}:?\d{2})?)?$/

export interface ParsedBound {
  /** The instant named (for a date alone: the local midnight starting it). */
  instant: number
  /** True for a date without a time: as an end bound it covers that whole local day. */
  dateOnly: boolean
}

/** Parses one bound; undefined when the text is not a real calendar date-time. */
export function parseBound(text: string, zone: string): ParsedBound | undefined {
  const m = PARSE.exec(text)
  if (!m) return undefined
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const probe = new Date(Date.UTC(year, month - 1, day))
  if (probe.getUTCFullYear() !== year || probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day) {
    return undefined
  }
  if (m[4] === undefined) {
    return { instant: localMidnight(m.slice(1, 4).join('-'), zone), dateOnly: true }
  }
  const hour = Number(m[4])
  const minute = Number(m[5])
  const second = Number(m[6] ?? 0)
  const millis = Math.round(Number(`0.${m[7] ?? '0'}`) * 1000)
  if (hour > 23 || minute > 59 || second > 59) return undefined
  const offset = m[8]
  if (offset === undefined) {
    return { instant: localToInstant({ year, month, day, hour, minute, second }, zone) + millis, dateOnly: false }
  }
  let offsetMinutes = 0
  if (offset !== 'Z' && offset !== 'z') {
    const digits = offset.slice(1).replace(':', '')
    const oh = Number(digits.slice(0, 2))
    const om = Number(digits.slice(2))
    if (oh > 23 || om > 59) return undefined
    offsetMinutes = (offset[0] === '-' ? -1 : 1) * (oh * 60 + om)
  }
  return {
    instant: Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000,
    dateOnly: false,
  }
}
