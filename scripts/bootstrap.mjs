#!/usr/bin/env node
/**
 * What `npm start`, `npm test` and the other root scripts run first:
 *   node scripts/bootstrap.mjs COMMAND [ARG...]
 * It makes sure the project has what it needs, inside the project folder, saying so in one
 * line each: a Node.js that satisfies `engines.node` of package.json (else Node 24 from the npm
 * registry into .tools/node), pnpm (into .tools/pnpm, when packages must be installed and no
 * pnpm 12 runs this), and the packages (`pnpm install --frozen-lockfile` when node_modules is
 * missing or pnpm-lock.yaml changed since the last install). Then it runs COMMAND (`node` is the
 * chosen Node) with .tools and node_modules/.bin first on PATH, forwarding arguments, standard
 * streams, signals and the exit status. With everything in place it reads two small files and
 * hashes the lockfile: no noticeable delay. A `.env` file at the root, when there, sets the
 * variables the shell does not.
 *
 * Plain JavaScript on purpose: it must run on the machine's Node (18 or later) without flags,
 * before any TypeScript-capable Node or package exists.
 */
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { accessSync, constants, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const tools = join(root, '.tools')
const NODE_MAJOR = 24
const PNPM_MAJOR = 12
const nodeBin = join(tools, 'node', 'node_modules', '.bin')
const pnpmBin = join(tools, 'pnpm', 'node_modules', '.bin')
const stamp = join(root, 'node_modules', '.lockfile-installed')

/** `1.2.3` -> [1, 2, 3] */
const parts = (version) => version.replace(/^v/, '').split('.').map(Number)

function compare(a, b) {
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

/** Whether `version` satisfies a range of `^X.Y.Z` / `>=X.Y.Z` alternatives joined by `||`. */
export function satisfies(version, range) {
  const v = parts(version)
  return range.split('||').some((alternative) => {
    const m = /^\s*(\^|>=\s*)(\d+(?:\.\d+){0,2})\s*$/.exec(alternative)
    if (!m) throw new Error(`engines.node: cannot read ${JSON.stringify(alternative.trim())} (use ^X.Y.Z or >=X.Y.Z)`)
    const floor = parts(m[2])
    return compare(v, floor) >= 0 && (m[1] !== '^' || v[0] === floor[0])
  })
}

/** One line on stderr for each step; the end of the line says how it went. */
function step(text, work) {
  const started = Date.now()
  process.stderr.write(`${text} ...`)
  const result = work()
  process.stderr.write(` done (${Math.round((Date.now() - started) / 100) / 10} s)\n`)
  return result
}

/** Runs a tool quietly; its output is shown only when it fails. */
function quiet(command, args, env) {
  const result = spawnSync(command, args, { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  if (result.status !== 0) {
    process.stderr.write(` failed\n${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}\n`)
    process.exit(1)
  }
}

function executable(path) {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Where `name` is on `path`, or undefined. */
function which(name, path) {
  for (const dir of path.split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name)
  }
  return undefined
}

const npm = () =>
  process.env.npm_execpath?.includes('npm-cli') ? [process.execPath, process.env.npm_execpath] : ['npm']

function npmInstall(prefix, spec, env) {
  const [command, ...before] = npm()
  quiet(command, [...before, 'install', '--prefix', prefix, spec, '--no-audit', '--no-fund', '--loglevel=error'], env)
}

// 0. A .env file at the root, as many projects keep one: its variables for every command, except
//    those the shell sets (they win). One line says so, on stderr.
const dotenv = join(root, '.env')
if (existsSync(dotenv)) {
  if (typeof process.loadEnvFile === 'function') {
    process.loadEnvFile(dotenv)
    process.stderr.write('Variables from .env (those set in the shell win)\n')
  } else {
    process.stderr.write(`.env not read: Node ${process.versions.node} cannot (20.12 or later can)\n`)
  }
}

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const required = manifest.engines?.node ?? '>=0'
const env = { ...process.env }
const path = [join(root, 'node_modules', '.bin'), process.env.PATH ?? '']

// 1. Node: this one when it will do, else the project's own Node 24.
let node = process.execPath
if (!satisfies(process.versions.node, required)) {
  const installed = join(tools, 'node', 'node_modules', 'node', 'package.json')
  const version = existsSync(installed) ? JSON.parse(readFileSync(installed, 'utf8')).version : undefined
  if (!version || !satisfies(version, required)) {
    step(
      `Node ${process.versions.node} is older than this project needs (${required}): installing Node ${NODE_MAJOR} from the npm registry into .tools/node`,
      () => npmInstall(join(tools, 'node'), `node@${NODE_MAJOR}`, env),
    )
  }
  node = join(nodeBin, 'node')
  path.unshift(nodeBin)
}
if (existsSync(pnpmBin)) path.unshift(pnpmBin)
env.PATH = path.join(delimiter)

// 2. Packages, when node_modules is missing or the lockfile changed since the last install.
const lockfile = join(root, 'pnpm-lock.yaml')
const hash = createHash('sha256').update(readFileSync(lockfile)).digest('hex')
const current = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : undefined
if (current !== hash) {
  // 2a. pnpm: the one running this script, the project's own, or a new one in .tools/pnpm.
  const agent = process.env.npm_config_user_agent ?? ''
  let pnpm = agent.startsWith(`pnpm/${PNPM_MAJOR}.`) && process.env.npm_execpath ? process.env.npm_execpath : undefined
  pnpm ??= which('pnpm', pnpmBin)
  if (!pnpm) {
    step(`pnpm ${PNPM_MAJOR}: installing it from the npm registry into .tools/pnpm`, () =>
      npmInstall(join(tools, 'pnpm'), `pnpm@${PNPM_MAJOR}`, env),
    )
    pnpm = join(pnpmBin, 'pnpm')
    env.PATH = `${pnpmBin}${delimiter}${env.PATH}`
  }
  step(
    !existsSync(join(root, 'node_modules'))
      ? 'Installing the packages: pnpm install --frozen-lockfile'
      : current === undefined
        ? 'Checking the packages against pnpm-lock.yaml: pnpm install --frozen-lockfile'
        : 'pnpm-lock.yaml changed since the last install: pnpm install --frozen-lockfile',
    () => quiet(pnpm, ['install', '--frozen-lockfile'], env),
  )
  writeFileSync(stamp, `${hash}\n`)
}

// 3. The command itself, as if it had been run directly.
const [command, ...args] = process.argv.slice(2)
if (!command) {
  process.stderr.write('usage: node scripts/bootstrap.mjs COMMAND [ARG...]\n')
  process.exit(2)
}
// Node's compile cache (Node 22.1 and later): the modules a service, a command or a test process
// loads are compiled once and kept, not again at each of their thousands of starts (a third of the
// CPU a command spends before it runs). Older Nodes ignore the variable.
env.NODE_COMPILE_CACHE ??= join(root, 'node_modules', '.cache', 'node-compile-cache')
const program = command === 'node' ? node : (which(command, env.PATH) ?? command)
const child = spawn(program, args, { cwd: process.cwd(), env, stdio: 'inherit' })
// Every signal is passed on, so one sent to this process alone (a supervisor's SIGTERM) reaches
// the command; Ctrl-C reaches the whole process group, so the command sees that one twice (the
// stack ignores the repeat). The command decides when it is done; this process follows it.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
  })
}
child.on('error', (error) => {
  process.stderr.write(`${command}: ${error.message}\n`)
  process.exit(127)
})
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal)
    process.kill(process.pid, signal)
  } else process.exit(code ?? 1)
})
