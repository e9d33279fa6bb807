/** The write path's binary array parameters, read back by the database they are written for. */
import { afterAll, describe, expect, it } from 'vitest'
import { binaryArray } from '../src/repositories/binary-arrays.ts'
import { testDatabase } from './harness.ts'

const database = await testDatabase()
afterAll(() => database.close())

describe('binary array parameters', () => {
  it('PostgreSQL reads back every element of each type, sign and size: int4, int8 up to 2^53, float8, bool', async () => {
    const int4 = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 920]
    const int8 = [
      0,
      1,
      -1,
      2 ** 32,
      2 ** 32 - 1,
      -(2 ** 32),
      1_764_000_000_123_456,
      -62_135_596_800_000_000,
      2 ** 53 - 1,
    ]
    const float8 = [0, -0.5, 1000.14, 1e-300, -1.7976931348623157e308, 0.1 + 0.2]
    const bool = [true, false, false, true]
    const { rows } = await database.pool.query(
      'select $1::int4[] as int4, $2::int8[]::text[] as int8, $3::float8[] as float8, $4::bool[] as bool, cardinality($5::int8[]) as empty',
      [
        binaryArray('int4', int4.length, (i) => int4[i] as number),
        binaryArray('int8', int8.length, (i) => int8[i] as number),
        binaryArray('float8', float8.length, (i) => float8[i] as number),
        binaryArray('bool', bool.length, (i) => bool[i] as boolean),
        binaryArray('int8', 0, () => 0),
      ],
    )
    expect(rows[0]).toEqual({ int4, int8: int8.map(String), float8, bool, empty: 0 })
  })

  it('an element of another type than the statement casts to is refused by the database, not misread', async () => {
    await expect(database.pool.query('select $1::int4[]', [binaryArray('int8', 1, () => 7)])).rejects.toThrow(
      /binary data has array element type 20 \(bigint\) instead of expected 23/,
    )
  })
})
