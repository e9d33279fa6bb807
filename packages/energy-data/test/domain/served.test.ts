/** The digits the data API serves, in JavaScript and in SQL: one rule. */
import { describe, expect, it } from 'vitest'
import { served, servedSql } from '../../src/domain/served.ts'
import { testDatabase } from '../harness.ts'

// what the walks found in answers, then values that must come out as they are
const NOISY: Array<[number, number]> = [
  [957.2665540000003, 957.266554],
  [92.2269999999999, 92.227],
  [9525.47820000001, 9525.4782],
  [0.1 + 0.2, 0.3],
  [105.82650000000001, 105.8265],
  [55.157000000000004, 55.157],
]
const KEPT = [0, -0.5, 55.157, 1493, 0.958333333333, 1e-15, -1.23456789012]

describe('served numbers', () => {
  it('drop the binary noise past 12 significant digits and keep every other value', () => {
    for (const [noisy, clean] of NOISY) expect(served(noisy), String(noisy)).toBe(clean)
    for (const value of KEPT) expect(served(value)).toBe(value)
    expect(served(2 / 3)).toBe(0.666666666667)
  })

  it('are written alike by the database, NaN and infinities as the missing value', async () => {
    const database = await testDatabase()
    try {
      const values = [...NOISY.map(([noisy]) => noisy), ...KEPT, 2 / 3]
      const { rows } = await database.pool.query<{ text: string }>(
        `select ${servedSql('x', "'null'")} as text from unnest($1::float8[]) with ordinality u(x, i) order by i`,
        [values],
      )
      expect(rows.map((r) => r.text)).toEqual(values.map((v) => String(served(v))))
      const special = await database.pool.query<{ text: string }>(
        `select ${servedSql('x', "'null'")} as text from unnest('{NaN,Infinity,-Infinity}'::float8[]) u(x)`,
      )
      expect(special.rows.map((r) => r.text)).toEqual(['null', 'null', 'null'])
    } finally {
      await database.close()
    }
  })
})
