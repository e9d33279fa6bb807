/**
 * SenML resolution against RFC 8428's own examples (section 4.6, "Resolved Records"; section 5.1),
 * names moved into the campus's `urn:campus:meter:` space, and the units a datalogger may send.
 */
import { describe, expect, it } from 'vitest'
import { senmlConversion } from '../../src/catalogue/quantities.ts'
import { resolvePack } from '../../src/domain/senml.ts'

const NOW = Date.parse('2026-11-26T12:00:00Z')

describe('resolvePack', () => {
  it("resolves RFC 8428 section 4.6's pack as the RFC's resolved form says", () => {
    // RFC 8428 4.6: bn, bt, bu and bver on the first record; relative t on the later ones
    const pack = [
      { bn: 'urn:campus:meter:', bt: 1.276020076001e9, bu: 'A', bver: 5, n: '860', u: 'V', v: 120.1 },
      { n: '861', t: -5, v: 1.2 },
      { n: '861', t: -4, v: 1.3 },
      { n: '861', t: -3, v: 1.4 },
      { n: '861', t: -2, v: 1.5 },
      { n: '861', t: -1, v: 1.6 },
      { n: '861', v: 1.7 },
    ]
    const resolved = resolvePack(pack, NOW)
    expect(resolved.ok).toBe(true)
    if (!resolved.ok) return
    expect(resolved.refused).toEqual([])
    // the RFC's resolved times: 1.276020076001e+09, then 1.276020071001e+09 to 1.276020076001e+09
    expect(resolved.samples.map((s) => [s.meterId, s.timeUs / 1000, s.unit, s.value])).toEqual([
      [860, 1276020076001, 'V', 120.1],
      [861, 1276020071001, 'A', 1.2],
      [861, 1276020072001, 'A', 1.3],
      [861, 1276020073001, 'A', 1.4],
      [861, 1276020074001, 'A', 1.5],
      [861, 1276020075001, 'A', 1.6],
      [861, 1276020076001, 'A', 1.7],
    ])
  })

  it('adds bv and bs to values and sums, and reads small times as relative to now (section 4.5.3)', () => {
    const resolved = resolvePack(
      [
        { bn: 'urn:campus:meter:860', bv: 1000, bs: 50_000, u: 'kWh', t: -60, v: 2.5 },
        { s: 12.25 },
        { t: 1.7e9, v: -1 },
      ],
      NOW,
    )
    expect(resolved.ok && resolved.samples).toEqual([
      { index: 0, meterId: 860, timeUs: (NOW - 60_000) * 1000, unit: 'kWh', reading: 'value', value: 1002.5 },
      { index: 1, meterId: 860, timeUs: NOW * 1000, unit: undefined, reading: 'register', value: 50_012.25 },
      { index: 2, meterId: 860, timeUs: 1.7e12 * 1000, unit: undefined, reading: 'value', value: 999 },
    ])
  })

  it('refuses a record with its reason and keeps the others', () => {
    const resolved = resolvePack(
      [
        { bn: 'urn:campus:meter:', n: '860', v: 1 },
        { n: 'pump', v: 1 },
        { n: '860', vs: 'on' },
        { n: '860', v: 1, s: 2 },
        { n: '860' },
        { n: '860', v: '3' },
        { n: '860', t: 'yesterday', v: 1 },
        { n: '860', v: JSON.parse('1e400') }, // what a JSON body of 1e400 becomes
        { bn: 'urn:campus:meter:0', v: 1 },
        { bn: 'bad name', v: 1 },
        { bn: 'urn:campus:meter:', n: '861', v: 2 },
      ],
      NOW,
    )
    expect(resolved.ok).toBe(true)
    if (!resolved.ok) return
    expect(resolved.samples.map((s) => [s.index, s.meterId, s.value])).toEqual([
      [0, 860, 1],
      [10, 861, 2],
    ])
    expect(resolved.refused.map((r) => r.index)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(resolved.refused[0]?.reason).toBe('name "urn:campus:meter:pump" is not urn:campus:meter:<meter id>')
    expect(resolved.refused[2]?.reason).toMatch(/^both v and s/)
    expect(resolved.refused[6]?.reason).toBe('v is not a number')
  })

  it('refuses whole what is not a pack, or a pack it cannot understand', () => {
    for (const payload of [{}, 'x', 3, null, [], [1], [[]]]) expect(resolvePack(payload, NOW).ok).toBe(false)
    // a must-understand label (RFC 8428 section 4.4) and a version above 10
    expect(resolvePack([{ n: 'urn:campus:meter:1', v: 1, foo_: 1 }], NOW)).toEqual({
      ok: false,
      reason: 'record 0 has the must-understand label foo_',
    })
    expect(resolvePack([{ bver: 11, n: 'urn:campus:meter:1', v: 1 }], NOW).ok).toBe(false)
  })
})

describe('senmlConversion', () => {
  const convert = (symbol: string | undefined, to: Parameters<typeof senmlConversion>[1]) => {
    const c = senmlConversion(symbol, to)
    if ('reason' in c) throw new Error(c.reason)
    return c.convert
  }

  it('turns W into kW, Wh into kWh and L into m³ by exact decimal shifts', () => {
    expect(convert('W', 'unit:KiloW')(1234)).toBe(1.234)
    expect(convert('Wh', 'unit:KiloW-HR')(625.5)).toBe(0.6255)
    expect(convert('l', 'unit:M3')(7)).toBe(0.007)
    expect(convert('kW', 'unit:KiloW')(41.7)).toBe(41.7)
    expect(convert(undefined, 'unit:KiloW')(41.7)).toBe(41.7)
    // every value of a thousand W readings lands on the decimal a person would write
    for (let w = 0; w < 100_000; w += 97) expect(convert('W', 'unit:KiloW')(w)).toBe(Number((w / 1000).toString()))
  })

  it('refuses a unit of another quantity, or one it does not know', () => {
    expect(senmlConversion('kW', 'unit:KiloW-HR')).toEqual({ reason: "unit kW does not convert to the meter's kWh" })
    expect(senmlConversion('Cel', 'unit:M3')).toHaveProperty('reason')
    expect(senmlConversion('K', 'unit:DEG_C')).toEqual({ reason: 'unit "K" is not a SenML unit this service knows' })
    expect(senmlConversion('__proto__', 'unit:KiloW')).toHaveProperty('reason')
  })
})
