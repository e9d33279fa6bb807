/** How a client on this machine finds the running stack's services: variables, then the announcement, then defaults. */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runningStack, serviceUrl, stackFile } from '../src/service/running-stack.ts'

const energy = { name: 'energy', portEnv: 'ENERGY_PORT', defaultPort: 8000 }

function announced(pid: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'running-stack-'))
  writeFileSync(
    stackFile(dir),
    JSON.stringify({ pid, urls: { energy: 'http://127.0.0.1:8710', oauth: 'http://127.0.0.1:3710' } }),
  )
  return dir
}

describe('serviceUrl: where a client finds a service', () => {
  it('takes the port variable first, then the running stack, then the default port', () => {
    const dir = announced(process.pid)
    expect(serviceUrl(energy, { DATA_DIR: dir, ENERGY_PORT: '8123' })).toBe('http://127.0.0.1:8123')
    expect(serviceUrl(energy, { DATA_DIR: dir })).toBe('http://127.0.0.1:8710')
    expect(serviceUrl(energy, { DATA_DIR: mkdtempSync(join(tmpdir(), 'no-stack-')) })).toBe('http://127.0.0.1:8000')
  })

  it('ignores the announcement of a stack that is gone', () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.exit(0)']).pid
    const dir = announced(gone)
    expect(runningStack({ DATA_DIR: dir })).toBeUndefined()
    expect(serviceUrl(energy, { DATA_DIR: dir })).toBe('http://127.0.0.1:8000')
  })

  it('reaches a service listening on every interface on loopback', () => {
    expect(serviceUrl(energy, { HOST: '0.0.0.0', ENERGY_PORT: '9000' })).toBe('http://127.0.0.1:9000')
    expect(serviceUrl(energy, { HOST: '::1', ENERGY_PORT: '9000' })).toBe('http://[::1]:9000')
  })
})
