/** A transaction that lost to another (deadlock, serialization failure) runs again; nothing else does. */
import { describe, expect, it } from 'vitest'
import { retryingConflicts } from '../src/db/conflicts.ts'

const failing = (codes: string[]) => {
  let calls = 0
  const run = async () => {
    const code = codes[calls++]
    if (code) throw Object.assign(new Error(`failed with ${code}`), { code })
    return 'done'
  }
  return { run, calls: () => calls }
}

describe('retryingConflicts', () => {
  it('runs again after a deadlock or a serialization failure', async () => {
    const attempt = failing(['40P01', '40001'])
    expect(await retryingConflicts(attempt.run)).toBe('done')
    expect(attempt.calls()).toBe(3)
  })

  it('gives up after its attempts, with the last error', async () => {
    const attempt = failing(['40P01', '40P01', '40P01', '40P01'])
    await expect(retryingConflicts(attempt.run)).rejects.toMatchObject({ code: '40P01' })
    expect(attempt.calls()).toBe(3)
  })

  it('never runs again after any other error (a unique violation is an answer, not a conflict)', async () => {
    const attempt = failing(['23505'])
    await expect(retryingConflicts(attempt.run)).rejects.toMatchObject({ code: '23505' })
    expect(attempt.calls()).toBe(1)
  })
})
