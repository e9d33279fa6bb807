/**
 * scripts/bootstrap.mjs, which every root script runs first: with the toolchain and packages in
 * place (as here: the tests themselves were started through it) it installs nothing, says
 * nothing, and behaves as the command it runs: arguments, output, exit status and signals.
 */
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'

const BOOTSTRAP = fileURLToPath(new URL('../../../scripts/bootstrap.mjs', import.meta.url))
const bootstrap = (...args: string[]) => spawnSync(process.execPath, [BOOTSTRAP, ...args], { encoding: 'utf8' })

// a checkout installed by hand (pnpm install) has no record of it yet: the first run makes one
beforeAll(() => {
  expect(bootstrap('node', '-e', '').status).toBe(0)
})

describe('scripts/bootstrap.mjs', () => {
  it('runs the command with its arguments, passing its output and exit status through, adding nothing', () => {
    const result = bootstrap(
      'node',
      '-e',
      'console.log(process.argv.slice(1).join("|")); process.exit(7)',
      'a b',
      '--help',
    )
    expect(result.stderr).toBe('')
    expect(result.stdout).toBe('a b|--help\n')
    expect(result.status).toBe(7)
  })

  it('puts the project packages on PATH (vitest, biome...) and names a command it cannot find', () => {
    const found = bootstrap('tsc', '--version')
    expect(found.status).toBe(0)
    expect(found.stdout).toMatch(/^Version \d/)
    const missing = bootstrap('no-such-command-here')
    expect(missing.status).toBe(127)
    expect(missing.stderr).toContain('no-such-command-here')
  })

  it('passes a signal sent to it on to the command, and ends the way the command ended', async () => {
    const child = spawn(process.execPath, [BOOTSTRAP, 'node', '-e', 'console.log("up"); setInterval(() => {}, 1000)'])
    await new Promise((resolve) => child.stdout.once('data', resolve))
    child.kill('SIGTERM')
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    )
    expect(code).toBeNull()
    expect(signal).toBe('SIGTERM')
  })
})
