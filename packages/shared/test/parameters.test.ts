/** parametersWhere: the walk both services' per-request parameter checks share. */
import { describe, expect, it } from 'vitest'
import { parametersWhere } from '../src/server/validation.ts'

const notFinite = (value: unknown) => typeof value === 'number' && !Number.isFinite(value)

describe('parametersWhere', () => {
  it('names each parameter holding a matching value, alone or in a list, in their order', () => {
    const query = { a: 1, b: Number.POSITIVE_INFINITY, c: [2, Number.NaN], d: 'x', e: [3] }
    expect(parametersWhere(query, notFinite)).toEqual(['b', 'c'])
  })

  it('hands back the one shared empty list when nothing matches or there is nothing to walk', () => {
    const none = parametersWhere({ a: 1 }, notFinite)
    expect(none).toEqual([])
    for (const values of [undefined, null, 'text', {}]) expect(parametersWhere(values, notFinite)).toBe(none)
  })
})
