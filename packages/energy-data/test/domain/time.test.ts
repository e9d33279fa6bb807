import { describe, expect, it } from 'vitest'
import { instantFormatter, isTimeZone, parseInstant } from '../../src/domain/time.ts'

/** The offset of a zone at an instant, straight from Intl's longOffset name. */
function intlOffset(zone: string): (ms: number) => string {
  const names = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
  return (ms) => {
    const name = names.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value
    return name === 'GMT' ? '+00:00' : (name ?? '').replace('GMT', '')
  }
}

describe('instantFormatter', () => {
  for (const zone of ['Europe/Rome', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'UTC']) {
    it(`writes every quarter hour of a year with ${zone}'s offset`, () => {
      const format = instantFormatter(zone)
      const offset = intlOffset(zone)
      for (let t = Date.parse('2025-01-01T00:00:00Z'); t < Date.parse('2026-01-01T00:00:00Z'); t += 900_000) {
        const text = format(t)
        expect(text.slice(19)).toBe(offset(t))
        expect(Date.parse(text)).toBe(t)
      }
    })
  }

  it('shows the repeated hour of the autumn change twice, with different offsets', () => {
    const format = instantFormatter('Europe/Rome')
    expect(format(Date.parse('2025-10-26T00:30:00Z'))).toBe('2025-10-26T02:30:00+02:00')
    expect(format(Date.parse('2025-10-26T01:30:00Z'))).toBe('2025-10-26T02:30:00+01:00')
    expect(format(Date.parse('2025-03-30T01:00:00Z'))).toBe('2025-03-30T03:00:00+02:00')
  })
})

describe('parseInstant', () => {
  it('reads the forms the API accepts, UTC unless an offset is given', () => {
    expect(parseInstant('2025-03-30 01:00:00')).toBe(Date.parse('2025-03-30T01:00:00Z'))
    expect(parseInstant('2025-03-30T01:00:00')).toBe(Date.parse('2025-03-30T01:00:00Z'))
    expect(parseInstant('2025-03-30')).toBe(Date.parse('2025-03-30T00:00:00Z'))
    expect(parseInstant('2025-03-30T03:00:00+02:00')).toBe(Date.parse('2025-03-30T01:00:00Z'))
    expect(parseInstant('2025-03-30T03:00:00 02:00')).toBe(Date.parse('2025-03-30T01:00:00Z'))
    expect(parseInstant('2025-03-30T01:00:00.250Z')).toBe(Date.parse('2025-03-30T01:00:00.250Z'))
    expect(parseInstant('0050-01-01')).toBe(Date.parse('0050-01-01T00:00:00Z'))
  })

  it('refuses what is not a time', () => {
    for (const text of [
      '',
      'yesterday',
      '2025-02-29',
      '2025-13-01',
      '2025-01-01 24:00:00',
      '2025-01-01T10:61',
      '1/2/2025',
    ]) {
      expect(parseInstant(text), text).toBeUndefined()
    }
  })
})

describe('isTimeZone', () => {
  it('accepts IANA names only', () => {
    expect(isTimeZone('Europe/Rome')).toBe(true)
    expect(isTimeZone('UTC')).toBe(true)
    expect(isTimeZone('Etc/GMT+1')).toBe(true)
    expect(isTimeZone('Mars/Olympus')).toBe(false)
    expect(isTimeZone('+01:00')).toBe(false)
    expect(isTimeZone("Europe/Rome'; drop table meters")).toBe(false)
  })
})
