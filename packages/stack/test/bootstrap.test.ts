/**
 * scripts/bootstrap.mjs, which every root script runs first: with the toolchain and packages in
 * place (as here: the tests themselves were started through it) it installs nothing, says
 * nothing, and behaves as the command it runs: arguments, output, exit status and signals.
 */
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

  it('reads a .env file at the root: its variables for the command, those of the shell winning', () => {
    // a copy of the project's root (its packages linked), so the real root keeps no .env
    const root = mkdtempSync(join(tmpdir(), 'bootstrap-env-'))
    const real = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url))
    mkdirSync(join(root, 'scripts'))
    copyFileSync(BOOTSTRAP, join(root, 'scripts', 'bootstrap.mjs'))
    for (const file of ['package.json', 'pnpm-lock.yaml']) copyFileSync(real(file), join(root, file))
    symlinkSync(real('node_modules'), join(root, 'node_modules'))
    writeFileSync(join(root, '.env'), 'FROM_FILE=file\nBOTH=file\n')
    const result = spawnSync(
      process.execPath,
      [join(root, 'scripts', 'bootstrap.mjs'), 'node', '-e', 'console.log(process.env.FROM_FILE, process.env.BOTH)'],
      { encoding: 'utf8', env: { ...process.env, BOTH: 'shell' } },
    )
    expect(result.stdout).toBe('file shell\n')
    expect(result.stderr).toBe('Variables from .env (those set in the shell win)\n')
    expect(result.status).toBe(0)
  })
})
