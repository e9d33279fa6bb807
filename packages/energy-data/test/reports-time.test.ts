import { describe, expect, it } from 'vitest'
import { matchesIfNoneMatch, strongEtag } from '../src/dashboard/http-cache.ts'
import { formatIso, localDate, localMidnight, localToInstant, parseInstant } from '../src/domain/time.ts'
import { completeDays, lastDaysDefaults, quarterSlots, resolveWindow, wholeDays } from '../src/domain/window.ts'
import { scheduleRanges } from '../src/reports/palinsesti-report.ts'
import { chooseFormat } from '../src/routes/reports.ts'

const ROME = 'Europe/Rome'
const H = 3_600_000
const at = (iso: string) => Date.parse(iso)

describe('local time in Europe/Rome', () => {
  it('prints ISO 8601 with the offset in force on both sides of each change', () => {
    expect(formatIso(at('2025-03-30T00:59:59Z'), ROME)).toBe('2025-03-30T01:59:59+01:00')
    expect(formatIso(at('2025-03-30T01:00:00Z'), ROME)).toBe('2025-03-30T03:00:00+02:00')
    expect(formatIso(at('2025-10-26T00:45:00Z'), ROME)).toBe('2025-10-26T02:45:00+02:00')
    expect(formatIso(at('2025-10-26T01:00:00Z'), ROME)).toBe('2025-10-26T02:00:00+01:00')
    expect(formatIso(at('2025-10-26T01:00:00Z'), 'UTC')).toBe('2025-10-26T01:00:00+00:00')
  })

  it('has days of 23 and 25 hours on the change days', () => {
    expect(localMidnight('2025-03-31', ROME) - localMidnight('2025-03-30', ROME)).toBe(23 * H)
    expect(localMidnight('2025-10-27', ROME) - localMidnight('2025-10-26', ROME)).toBe(25 * H)
    expect(localMidnight('2025-10-26', ROME, 1)).toBe(localMidnight('2025-10-27', ROME))
    expect(localMidnight('2025-01-31', ROME, 1)).toBe(at('2025-01-31T23:00:00Z'))
    expect(localDate(at('2025-10-26T22:59:00Z'), ROME)).toBe('2025-10-26')
    expect(localDate(at('2025-10-26T23:00:00Z'), ROME)).toBe('2025-10-27')
  })

  it('reads the repeated hour as its first occurrence and the skipped hour with the winter offset', () => {
    const wall = { year: 2025, month: 10, day: 26, hour: 2, minute: 30, second: 0 }
    expect(localToInstant(wall, ROME)).toBe(at('2025-10-26T00:30:00Z'))
    expect(localToInstant({ ...wall, month: 3, day: 30 }, ROME)).toBe(at('2025-03-30T01:30:00Z'))
    expect(localToInstant({ ...wall, hour: 12 }, ROME)).toBe(at('2025-10-26T11:30:00Z'))
  })
})

describe('report bounds', () => {
  it('reads dates and date-times without an offset as UTC, as every endpoint does, and offsets as given', () => {
    expect(parseInstant('2025-10-26')).toBe(at('2025-10-26T00:00:00Z'))
    expect(parseInstant('2025-10-26T12:00')).toBe(at('2025-10-26T12:00:00Z'))
    expect(parseInstant('2025-10-26 12:00:30')).toBe(at('2025-10-26T12:00:30Z'))
    expect(parseInstant('2025-10-26T12:00:00Z')).toBe(at('2025-10-26T12:00:00Z'))
    expect(parseInstant('2025-10-26T12:00:00+0530')).toBe(at('2025-10-26T06:30:00Z'))
    expect(parseInstant('2025-10-26T12:00:00.250-01:00')).toBe(at('2025-10-26T13:00:00.250Z'))
  })

  it('refuses impossible calendar values', () => {
    for (const text of ['2025-02-29', '2025-13-01', '2025-10-26T24:00', '2025-10-26T10:60', '2025-10-26T10:00+25:00']) {
      expect(parseInstant(text), text).toBeUndefined()
    }
  })

  const reportWindow = (query: { start_datetime?: string; end_datetime?: string }, latest: number | undefined) =>
    wholeDays(
      resolveWindow(query, { zone: ROME, defaults: lastDaysDefaults(7, latest, at('2025-11-20T10:00:00Z'), ROME) }),
    )

  it('covers the whole local day of an end given as a date, 25 hours on the fall-back day', () => {
    const window = reportWindow({ start_datetime: '2025-10-26', end_datetime: '2025-10-26' }, undefined)
    expect(window.days).toEqual(['2025-10-26'])
    expect(window.to - window.from).toBe(25 * H)
  })

  it('defaults to the 7 complete local days ending with the newest data', () => {
    const window = reportWindow({}, at('2025-10-27T22:45:00Z'))
    expect(window.to).toBe(at('2025-10-27T23:00:00Z'))
    expect(window.days).toEqual(['21', '22', '23', '24', '25', '26', '27'].map((d) => `2025-10-${d}`))
    expect((window.to - window.from) / (15 * 60_000)).toBe(7 * 96 + 4)
    // a day the data stops in is not complete: the window ends the day before
    expect(reportWindow({}, at('2025-10-27T10:00:00Z')).days.at(-1)).toBe('2025-10-26')
  })
})

describe('chart windows', () => {
  it('are 672 quarter hours ending with the newest one, across a DST change', () => {
    const slots = quarterSlots(at('2025-10-27T10:07:00Z'))
    expect(slots).toHaveLength(672)
    expect(slots.at(-1)).toBe(at('2025-10-27T10:00:00Z'))
    expect(slots[0]).toBe(at('2025-10-20T10:15:00Z'))
  })

  it('hold only complete local days', () => {
    const now = at('2025-11-20T10:00:00Z')
    const midDay = completeDays(at('2025-10-27T10:00:00Z'), now, ROME, 30)
    expect(midDay.days).toHaveLength(30)
    expect(midDay.days.at(-1)).toBe('2025-10-26')
    expect(midDay.days[0]).toBe('2025-09-27')
    expect(midDay.to).toBe(at('2025-10-26T23:00:00Z'))
    expect(midDay.from).toBe(at('2025-09-26T22:00:00Z'))
    // the last quarter of a day completes it
    expect(completeDays(at('2025-10-27T22:45:00Z'), now, ROME, 30).days.at(-1)).toBe('2025-10-27')
  })
})

describe('schedules, formats and validators', () => {
  it('prints the hours of a schedule as ranges', () => {
    const shares: number[] = Array.from({ length: 24 }, (_, h) => (h >= 7 && h < 19 ? 0.9 : 0.1))
    expect(scheduleRanges(shares, 'en')).toBe('07:00-19:00')
    shares[12] = 0.2
    expect(scheduleRanges(shares, 'en')).toBe('07:00-12:00, 13:00-19:00')
    expect(scheduleRanges(Array(24).fill(1), 'en')).toBe('always')
    expect(scheduleRanges(Array(24).fill(1), 'it')).toBe('sempre')
    expect(scheduleRanges(Array(24).fill(0), 'en')).toBe('never')
    expect(scheduleRanges(Array(24).fill(null), 'en')).toBe('no data')
    expect(scheduleRanges([...Array(23).fill(0), 1], 'it')).toBe('23:00-24:00')
  })

  it('chooses the report format from the parameter, else from Accept by weight, else JSON as the contract says', () => {
    expect(chooseFormat('text', 'application/json')).toBe('text')
    expect(chooseFormat(undefined, 'application/json')).toBe('json')
    expect(chooseFormat(undefined, 'text/plain;q=0.9, application/json')).toBe('json')
    expect(chooseFormat(undefined, 'text/plain, application/json;q=0.5')).toBe('text')
    expect(chooseFormat(undefined, 'text/plain;q=0, application/json')).toBe('json')
    expect(chooseFormat(undefined, 'text/markdown')).toBe('markdown')
    expect(chooseFormat(undefined, '*/*')).toBe('json')
    expect(chooseFormat(undefined, 'image/png')).toBe('json')
    expect(chooseFormat(undefined, undefined)).toBe('json')
  })

  it('matches If-None-Match weakly, in lists and with *', () => {
    const etag = strongEtag('body')
    expect(etag).toBe(strongEtag('body'))
    expect(etag).not.toBe(strongEtag('body '))
    expect(matchesIfNoneMatch(etag, etag)).toBe(true)
    expect(matchesIfNoneMatch(`W/${etag}`, etag)).toBe(true)
    expect(matchesIfNoneMatch(`"a", ${etag}`, etag)).toBe(true)
    expect(matchesIfNoneMatch('*', etag)).toBe(true)
    expect(matchesIfNoneMatch('"a"', etag)).toBe(false)
    expect(matchesIfNoneMatch(undefined, etag)).toBe(false)
  })
})
