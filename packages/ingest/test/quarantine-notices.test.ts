import { describe, expect, it } from 'vitest'
import { QuarantineNotices } from '../src/quarantine-notices.ts'

describe('quarantine notices on the console', () => {
  it('one line per reason and datalogger a minute, saying how many more came meanwhile', () => {
    const lines: string[] = []
    const notices = new QuarantineNotices((_o, m) => lines.push(m), 60_000)
    notices.refused('DL-A', 'unit', 'kW is not the unit of meter 860 (kWh)', 0)
    notices.refused('DL-A', 'unit', 'kW is not the unit of meter 860 (kWh)', 1000)
    notices.refused('DL-A', 'unknown_meter', 'no meter 9999', 2000)
    notices.refused('DL-B', 'unit', 'kW is not the unit of meter 870 (kWh)', 3000)
    notices.refused('DL-A', 'unit', 'kW is not the unit of meter 860 (kWh)', 30_000)
    notices.refused('DL-A', 'unit', 'kW is not the unit of meter 860 (kWh)', 61_000)
    expect(lines).toEqual([
      'quarantine: DL-A: unit: kW is not the unit of meter 860 (kWh)',
      'quarantine: DL-A: unknown_meter: no meter 9999',
      'quarantine: DL-B: unit: kW is not the unit of meter 870 (kWh)',
      'quarantine: DL-A: unit: kW is not the unit of meter 860 (kWh) (and 2 more since the last notice)',
    ])
  })
})
