/**
 * scripts/bootstrap.mjs, which every root script runs first: with the toolchain and packages in
 * place (as here: the tests themselves were started through it) it installs nothing, says
 * nothing, and behaves as the command it runs: arguments, output, exit status and signals.
 */
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
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

describe("the root scripts under npm's own shell", () => {
  const scripts = (
    JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as {
      scripts: Record<string, string>
    }
  ).scripts

  it('each replaces the shell with bootstrap (exec): no shell stands between npm and the command', () => {
    const through = Object.entries(scripts).filter(([, line]) => line.includes('scripts/bootstrap.mjs'))
    expect(through.length).toBeGreaterThan(10)
    expect(through.filter(([, line]) => !/^(\w+=\S+ )*exec node scripts\/bootstrap\.mjs /.test(line))).toEqual([])
  })

  it('a SIGINT or SIGTERM sent to the npm process itself stops the command', async () => {
    // a copy of the root whose start script runs a probe the way `npm start` runs the stack
    const root = mkdtempSync(join(tmpdir(), 'bootstrap-npm-'))
    const real = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url))
    mkdirSync(join(root, 'scripts'))
    copyFileSync(BOOTSTRAP, join(root, 'scripts', 'bootstrap.mjs'))
    copyFileSync(real('pnpm-lock.yaml'), join(root, 'pnpm-lock.yaml'))
    symlinkSync(real('node_modules'), join(root, 'node_modules'))
    const probe =
      'process.on("SIGINT", () => { console.log("stopped by SIGINT"); process.exit(0) }); process.on("SIGTERM", () => { console.log("stopped by SIGTERM"); process.exit(0) }); console.log("up"); setInterval(() => {}, 1000)'
    writeFileSync(join(root, 'probe.js'), probe)
    const pkg = JSON.parse(readFileSync(real('package.json'), 'utf8'))
    pkg.scripts = { start: scripts.start?.replace('packages/stack/src/start.ts', join(root, 'probe.js')) }
    writeFileSync(join(root, 'package.json'), JSON.stringify(pkg))
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const npm = spawn('npm', ['start', '--silent'], { cwd: root, env: process.env })
      let out = ''
      npm.stdout.on('data', (chunk: Buffer) => {
        out += chunk
      })
      await new Promise<void>((resolve) => npm.stdout.on('data', () => out.includes('up') && resolve()))
      npm.kill(signal)
      // a signal that never reaches the probe leaves it running: wait a bounded time, then clean up
      const code = await new Promise<number | null | 'still running'>((resolve) => {
        const timer = setTimeout(() => resolve('still running'), 10_000)
        npm.on('exit', (c) => {
          clearTimeout(timer)
          resolve(c)
        })
      })
      if (code === 'still running') spawnSync('pkill', ['-f', root])
      expect([out.trim(), code], signal).toEqual([`up\nstopped by ${signal}`, 0])
    }
  })
})
