/**
 * `pnpm start`: both services on the embedded database, in one terminal.
 *
 * This process owns the embedded PGlite directories (`.data/oauth`, `.data/energy`), serves them
 * on loopback ports and migrates them; then it runs each service as its own process pointed at
 * its database, prefixes their output, prepares demo data once, and stops everything on Ctrl-C.
 * A service whose *_DATABASE_URL is set uses that server instead.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import Type from 'typebox'
import { loadConfig, runMain } from '../config.ts'
import { migrate, readMigrations } from '../db/migrator.ts'
import { openServiceDatabase, type ServiceDatabase } from '../db/open.ts'
import { prettyLine } from './pretty.ts'
import { services } from './services.ts'

const Config = Type.Object({
  HOST: Type.String({ default: '127.0.0.1' }),
  DATA_DIR: Type.String({ default: '.data' }),
  OAUTH_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  ENERGY_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8000 }),
  OAUTH_DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  ENERGY_DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
})

const NODE = [process.execPath, '--experimental-strip-types', '--disable-warning=ExperimentalWarning']

function prefixed(name: string, stream: NodeJS.ReadableStream | null, out: NodeJS.WriteStream) {
  if (!stream) return
  const tag = `[${name}]`.padEnd(9)
  createInterface({ input: stream }).on('line', (line) => out.write(`${tag}${prettyLine(line)}\n`))
}

function run(name: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(NODE[0] as string, [...NODE.slice(1), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  prefixed(name, child.stdout, process.stdout)
  prefixed(name, child.stderr, process.stderr)
  return child
}

function exited(child: ChildProcess): Promise<number> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)))
}

async function waitReady(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      const response = await fetch(url)
      if (response.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150))
  }
  throw new Error(`${url} did not become ready`)
}

runMain(async () => {
  const config = loadConfig(Config)
  const watch = process.argv.includes('--watch')
  const databases = new Map<string, ServiceDatabase<unknown>>()
  const children = new Map<string, ChildProcess>()
  let stopping = false

  const stopAll = async (code: number) => {
    if (stopping) return
    stopping = true
    for (const child of children.values()) child.kill('SIGTERM')
    const killer = setTimeout(() => {
      for (const child of children.values()) child.kill('SIGKILL')
    }, 15_000)
    await Promise.all([...children.values()].map(exited))
    clearTimeout(killer)
    for (const database of databases.values()) await database.close()
    process.exit(code)
  }
  // Scripts and supervisors find the stack here (stop it with SIGINT or SIGTERM to this pid or its group).
  const pidFile = resolve(config.DATA_DIR, 'stack.pid')
  mkdirSync(dirname(pidFile), { recursive: true })
  writeFileSync(pidFile, String(process.pid))
  process.on('exit', () => rmSync(pidFile, { force: true }))
  process.on('SIGINT', () => void stopAll(0))
  process.on('SIGTERM', () => void stopAll(0))

  const ports: Record<string, number> = { oauth: config.OAUTH_PORT, energy: config.ENERGY_PORT }
  const urls: Record<string, string> = {}
  // both databases open and migrate at once: a cold embedded start costs seconds each
  await Promise.all(
    services.map(async (descriptor) => {
      const explicit = (config as Record<string, unknown>)[descriptor.databaseUrlEnv] as string | undefined
      const database = await openServiceDatabase({ service: descriptor.name, url: explicit, dataDir: config.DATA_DIR })
      databases.set(descriptor.name, database)
      const result = await migrate(database.db as never, readMigrations(descriptor.migrationsDir))
      const note = result.applied.length ? `applied ${result.applied.length} migration(s)` : 'schema up to date'
      process.stdout.write(`[db]     ${descriptor.name}: ${database.description}, ${note}\n`)
      urls[descriptor.name] = database.url
    }),
  )

  const envs = new Map<string, NodeJS.ProcessEnv>()
  const started: Array<Promise<void>> = []
  for (const descriptor of services) {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      [descriptor.databaseUrlEnv]: urls[descriptor.name],
      [descriptor.portEnv]: String(ports[descriptor.name]),
      HOST: config.HOST,
      MIGRATE_ON_START: 'false',
    }
    envs.set(descriptor.name, env)
    const child = run(
      descriptor.name,
      [...descriptor.nodeOptions, ...(watch ? ['--watch'] : []), descriptor.serverEntry],
      env,
    )
    children.set(descriptor.name, child)
    child.once('exit', (code) => {
      if (!stopping) {
        process.stderr.write(`[${descriptor.name}] exited with code ${code}; stopping\n`)
        void stopAll(code || 1)
      }
    })
    started.push(waitReady(`http://${config.HOST}:${ports[descriptor.name]}/health/ready`, child, 30_000))
  }
  await Promise.all(started)
  if (stopping) return
  const lines = services.map((d) => `  ${d.title.padEnd(16)} http://${config.HOST}:${ports[d.name]}/docs`)
  process.stdout.write(`\nReady. Press Ctrl-C to stop.\n${lines.join('\n')}\n\n`)

  // Each service's `demo` command fills an empty database once and prints how to try it;
  // the services already answer meanwhile.
  await Promise.all(
    services.map(async (descriptor) => {
      const demo = run(descriptor.name, [descriptor.cliEntry, 'demo'], envs.get(descriptor.name) ?? {})
      children.set(`${descriptor.name}-demo`, demo)
      const code = await exited(demo)
      children.delete(`${descriptor.name}-demo`)
      if (code !== 0 && !stopping) {
        process.stderr.write(`[${descriptor.name}] demo data could not be prepared (exit ${code})\n`)
      }
    }),
  )
})
