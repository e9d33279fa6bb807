/** The line a test skipped for a missing server prints: it names the variable to set. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { answersAt } from '../src/net.ts'
import { needsService } from '../src/testing/requirements.ts'

const saved = {
  CI: process.env.CI,
  UNSET_URL_FOR_TEST: process.env.UNSET_URL_FOR_TEST,
  REDIS_URL: process.env.REDIS_URL,
}
afterEach(() => {
  vi.restoreAllMocks()
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})

function printed(work: () => Promise<boolean>): Promise<{ result: boolean; lines: string }> {
  let lines = ''
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines += String(chunk)
    return true
  })
  return work().then((result) => ({ result, lines }))
}

describe('needsService', () => {
  it('outside CI, skips with one line naming the variable and an example value', async () => {
    delete process.env.CI
    delete process.env.UNSET_URL_FOR_TEST
    const unset = await printed(() => needsService('some tests', 'UNSET_URL_FOR_TEST'))
    expect(unset.result).toBe(false)
    expect(unset.lines).toBe(
      '[test] some tests skipped (UNSET_URL_FOR_TEST is not set): set UNSET_URL_FOR_TEST to a server that answers, e.g. UNSET_URL_FOR_TEST=...; CI runs them\n',
    )

    process.env.REDIS_URL = 'redis://127.0.0.1:1'
    const nobody = await printed(() => needsService('Redis tests', 'REDIS_URL'))
    expect(nobody.result).toBe(false)
    expect(nobody.lines).toBe(
      '[test] Redis tests skipped (nothing answers at 127.0.0.1:1): set REDIS_URL to a server that answers, e.g. REDIS_URL=redis://127.0.0.1:6379; CI runs them\n',
    )
  })

  it('uses only a server its variable names, never one found at a default address', async () => {
    delete process.env.CI
    const machine = await answersAt('redis://127.0.0.1:6379')
    delete process.env.REDIS_URL
    const unset = await printed(() => needsService('Redis tests', 'REDIS_URL'))
    expect(unset.result).toBe(false)
    expect(unset.lines).toContain('(REDIS_URL is not set)')
    // the same Redis, named: used
    process.env.REDIS_URL = 'redis://127.0.0.1:6379'
    expect((await printed(() => needsService('Redis tests', 'REDIS_URL'))).result).toBe(machine)
  })

  it('under CI, always runs them (a missing server then fails loudly)', async () => {
    process.env.CI = 'true'
    delete process.env.UNSET_URL_FOR_TEST
    const { result, lines } = await printed(() => needsService('Redis tests', 'UNSET_URL_FOR_TEST'))
    expect(result).toBe(true)
    expect(lines).toBe('')
  })
})
