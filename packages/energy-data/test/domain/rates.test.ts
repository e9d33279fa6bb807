import { describe, expect, it } from 'vitest'
import { type RateVersion, timelineOf } from '../../src/domain/rates.ts'

const band = (validFrom: string, validTo: string, value: number) => ({
  commodity: 'water' as const,
  validFrom,
  validTo,
  days: 'all' as const,
  fromMinute: 0,
  toMinute: 1440,
  value,
})
const at = (text: string) => Date.parse(text)

describe('the rates in force', () => {
  it('are the newest version whose span holds the quarter hour: an import changes nothing outside its span', () => {
    const versions: RateVersion[] = [
      { id: 1, zone: 'Europe/Rome', bands: [band('2025-01-01', '2026-01-01', 2)], hours: [] },
      { id: 2, zone: 'Europe/Rome', bands: [band('2025-03-10', '2025-03-12', 3)], hours: [] },
    ]
    const timeline = timelineOf(versions, 'water', at('2025-03-09T00:00:00Z'), at('2025-03-13T00:00:00Z'))
    // local midnights of Rome: 23:00 UTC the day before
    expect(timeline.edges).toEqual([
      at('2025-03-09T00:00:00Z'),
      at('2025-03-09T23:00:00Z'),
      at('2025-03-11T23:00:00Z'),
      at('2025-03-13T00:00:00Z'),
    ])
    expect(timeline.values).toEqual([2, 3, 2])
    expect(timeline.versions).toEqual([1, 2, 1])
  })

  it('walk only the span imported: a window of centuries is a null before and after it', () => {
    const versions: RateVersion[] = [{ id: 1, zone: 'UTC', bands: [band('2025-01-01', '2025-01-02', 2)], hours: [] }]
    const timeline = timelineOf(versions, 'water', at('1000-01-01T00:00:00Z'), at('3000-01-01T00:00:00Z'))
    expect(timeline.edges).toEqual([
      at('1000-01-01T00:00:00Z'),
      at('2025-01-01T00:00:00Z'),
      at('2025-01-02T00:00:00Z'),
      at('3000-01-01T00:00:00Z'),
    ])
    expect(timeline.values).toEqual([null, 2, null])
    expect(timelineOf(versions, 'electricity', 0, at('3000-01-01T00:00:00Z')).values).toEqual([null])
  })
})
