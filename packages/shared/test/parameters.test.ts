/** parametersWhere and refusedParameters: the walk both services' per-request parameter checks share. */
import { describe, expect, it } from 'vitest'
import { FINITE_NUMBERS, type ParameterRule, parametersWhere, refusedParameters } from '../src/server/validation.ts'

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

describe('refusedParameters', () => {
  const NUL: ParameterRule = {
    parts: ['query', 'body', 'path'],
    test: (value) => typeof value === 'string' && value.includes('\u0000'),
    msg: 'must not contain the NUL character',
    type: 'nul',
  }

  it('names every parameter each rule refuses, in the parts that rule covers', () => {
    const request = {
      query: { year: Number.POSITIVE_INFINITY, name: 'a\u0000b' },
      body: { count: Number.NaN, username: ['x', 'y\u0000'] },
      params: { id: Number.NaN },
    }
    expect(refusedParameters(request, [FINITE_NUMBERS, NUL])).toEqual([
      { loc: ['query', 'year'], msg: 'Input should be a finite number', type: 'finite_number' },
      { loc: ['path', 'id'], msg: 'Input should be a finite number', type: 'finite_number' },
      { loc: ['query', 'name'], msg: 'must not contain the NUL character', type: 'nul' },
      { loc: ['body', 'username'], msg: 'must not contain the NUL character', type: 'nul' },
    ])
  })

  it('answers undefined when no rule refuses anything', () => {
    const request = { query: { year: 2024, name: 'ab' }, body: undefined, params: {} }
    expect(refusedParameters(request, [FINITE_NUMBERS, NUL])).toBeUndefined()
    expect(refusedParameters(request, [])).toBeUndefined()
  })
})
