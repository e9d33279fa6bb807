/**
 * `pnpm start` as a newcomer sees it, as a real process: a line per database while it opens, one
 * plain "Try it" block once the services answer (with a key that works at once, and the live line), `pnpm demo`
 * showing the same block again, `--help`, and Ctrl-C stopping everything.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { type AddressInfo, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { energyService } from '@campus/energy-data/service'
import { oauthService } from '@campus/oauth-server/service'
import { freePort } from '@campus/shared'
import { createTestDatabase, type TestDatabase } from '@campus/shared/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { portProblems } from '../src/ports.ts'

const src = (file: string) => fileURLToPath(new URL(`../src/${file}`, import.meta.url))
const NODE = [process.execPath, '--disable-warning=ExperimentalWarning']

const databases: Array<TestDatabase<unknown>> = []
let env: Record<string, string | undefined>

beforeAll(async () => {
  for (const service of [oauthService, energyService]) {
    databases.push(await createTestDatabase<unknown>(`start${service.name}`, service.migrationsDir))
  }
  env = {
    ...process.env,
    OAUTH_DATABASE_URL: databases[0]!.url,
    ENERGY_DATABASE_URL: databases[1]!.url,
    OAUTH_PORT: String(await freePort()),
    ENERGY_PORT: String(await freePort()),
    INGEST_PORT: String(await freePort()),
    MQTT_PORT: String(await freePort()),
    DATA_DIR: mkdtempSync(join(tmpdir(), 'stack-start-')),
    HOST: '127.0.0.1',
    // a few days of demo data: the seed runs while the tests do, on this process's database
    DEMO_DAYS: '3',
  }
})
afterAll(async () => {
  // a test that failed before its Ctrl-C leaves the shared stack running
  if (first) {
    first.child.kill('SIGINT')
    await first.exited
  }
  for (const database of databases) await database.close()
})

/** The stack the tests below share, started by the first that needs it; stopped by Ctrl-C in its own test. */
let first: ReturnType<typeof startStack> | undefined
let block = ''
const running = () => {
  first ??= startStack()
  return first
}

const TRY_IT = /\nTry it:\n(?: {2}.*\n)+Shown again by: .*\n/

/** `pnpm start` as a process; `output()` is everything it wrote so far. */
function startStack(extra: string[] = []) {
  const child = spawn(NODE[0]!, [...NODE.slice(1), src('start.ts'), ...extra], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let text = ''
  child.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  return { child, output: () => text, exited }
}

/** Output of a running process until `pattern` appears in it. */
function waitFor(child: ChildProcess, output: () => string, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(output())
      if (match) {
        child.stdout?.off('data', check)
        resolve(match[0])
      }
    }
    child.stdout?.on('data', check)
    child.once('exit', (code) => reject(new Error(`exited (${code}) before ${pattern}:\n${output()}`)))
    check()
  })
}

describe('pnpm start', () => {
  it('--help prints the usage, as the person typed the command, and starts nothing; an unknown flag is a usage mistake', () => {
    const helpUnder = (agent: string) =>
      spawnSync(NODE[0]!, [...NODE.slice(1), src('start.ts'), '--help'], {
        env: { ...env, npm_config_user_agent: agent },
        encoding: 'utf8',
      })
    const help = helpUnder('pnpm/12.21.0 npm/? node/v24.0.0 linux x64')
    expect(help.status).toBe(0)
    expect(help.stdout).toContain('usage: pnpm start [--watch]')
    expect(help.stdout).not.toContain('[db]')
    expect(helpUnder('npm/10.9.0 node/v20.20.2 linux x64 workspaces/false').stdout).toContain(
      'usage: npm start -- [--watch]',
    )
    const wrong = spawnSync(NODE[0]!, [...NODE.slice(1), src('start.ts'), '--wacth'], { env, encoding: 'utf8' })
    expect(wrong.status).toBe(2)
    expect(wrong.stderr).toContain("Unknown option '--wacth'")
  })

  it('says what each database is doing, then prints one plain Try it block that works at once', async () => {
    const { child, output } = running()
    block = await waitFor(child, output, TRY_IT)
    expect(output()).toContain('[db]     oauth: connecting to its PostgreSQL server')
    expect(output()).toContain('[db]     energy: connecting to its PostgreSQL server')
    const lines = block.trim().split('\n')
    // nothing to strip before copying: no [service] prefixes in the block
    for (const line of lines) expect(line).not.toMatch(/^\[/)
    const oauth = `http://127.0.0.1:${env.OAUTH_PORT}`
    const energy = `http://127.0.0.1:${env.ENERGY_PORT}`
    const password = /sign_in {3}as demo \/ (\S+)/.exec(block)?.[1]
    expect(password).toBeTruthy()
    for (const url of [`${oauth}/users/sign_in`, `${oauth}/profile/applications`, `${energy}/dashboard`]) {
      expect(block).toContain(url)
    }
    expect(block).toContain(`${oauth}/docs`)
    expect(block).toContain(`${energy}/docs`)
    // live: the embedded broker and the ingest service, ready
    const ingest = `http://127.0.0.1:${env.INGEST_PORT}`
    expect(block).toContain(`mqtt://127.0.0.1:${env.MQTT_PORT} on campus/<datalogger>/senml`)
    expect(block).toContain(`POST ${ingest}/ingest/senml`)
    expect((await fetch(`${ingest}/health/ready`)).status).toBe(200)
    const key = /API key +(edk_\S+)/.exec(block)?.[1]
    expect(key).toBeTruthy()
    // the Live line's POST takes the gateway key shown under it; the reading key may not write
    const gatewayKey = /Gateway key +(edk_\S+)/.exec(block)?.[1]
    expect(block).toContain(`POST ${ingest}/ingest/senml with the gateway key`)
    const post = (apiKey: string) =>
      fetch(`${ingest}/ingest/senml`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/senml+json' },
        body: JSON.stringify([{ n: 'urn:campus:meter:900', u: 'kW', v: 41.7 }]),
      })
    const taken = await post(gatewayKey!)
    expect(taken.status, await taken.clone().text()).toBe(200)
    expect((await post(key!)).status).toBe(403)
    // the key works at once, whether or not the demo data is still being seeded
    const meters = await fetch(`${energy}/metadata/meters/`, { headers: { 'x-api-key': key! } })
    expect(meters.status).toBe(200)
    // the demo user, password and client work together
    const clientId = /Demo client +(\S+)/.exec(block)?.[1]
    const token = await fetch(`${oauth}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'demo',
        password: password!,
        client_id: clientId!,
      }),
    })
    const { access_token } = (await token.json()) as { access_token: string }
    const user = await fetch(`${oauth}/api/v4/user`, { headers: { authorization: `Bearer ${access_token}` } })
    expect(((await user.json()) as { username: string }).username).toBe('demo')

    // pnpm demo shows the same block again, from a file only its owner reads
    const again = spawnSync(NODE[0]!, [...NODE.slice(1), src('demo.ts')], { env, encoding: 'utf8' })
    expect(again.status).toBe(0)
    expect(again.stdout.trim()).toBe(block.trim())
    expect(statSync(join(env.DATA_DIR!, 'demo.json')).mode & 0o777).toBe(0o600)
    // ...with the addresses the running stack announced, from a shell that does not know its ports
    const { OAUTH_PORT: _o, ENERGY_PORT: _e, INGEST_PORT: _i, MQTT_PORT: _m, ...portless } = env
    const elsewhere = spawnSync(NODE[0]!, [...NODE.slice(1), src('demo.ts')], { env: portless, encoding: 'utf8' })
    expect(elsewhere.stdout.trim()).toBe(block.trim())
  })

  it('one service dying stops none of the others: it is started again, and the log says why', async () => {
    const { child, output } = running()
    await waitFor(child, output, TRY_IT)
    const energyServer = energyServerOf(child.pid!)
    expect(energyServer).toBeDefined()
    process.kill(energyServer!, 'SIGKILL')
    await waitFor(child, output, /\[energy\] +was killed \(SIGKILL\); starting it again in 1 s, the others go on/)
    // the OAuth server and the ingest service never stopped
    expect((await fetch(`http://127.0.0.1:${env.OAUTH_PORT}/health/live`)).status).toBe(200)
    expect((await fetch(`http://127.0.0.1:${env.INGEST_PORT}/health/live`)).status).toBe(200)
    let back = false
    for (let i = 0; i < 600 && !back; i++) {
      back = await fetch(`http://127.0.0.1:${env.ENERGY_PORT}/health/live`).then(
        (r) => r.status === 200,
        () => false,
      )
      if (!back) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(back).toBe(true)
  })

  it('a second start on the same DATA_DIR refuses at once, naming the running one, and leaves its files alone', async () => {
    const { child, output } = running()
    await waitFor(child, output, TRY_IT)
    const announced = readFileSync(join(env.DATA_DIR!, 'stack.json'), 'utf8')
    const ports = { OAUTH_PORT: '', ENERGY_PORT: '', INGEST_PORT: '', MQTT_PORT: '' }
    for (const name of Object.keys(ports) as Array<keyof typeof ports>) ports[name] = String(await freePort())
    const second = spawnSync(NODE[0]!, [...NODE.slice(1), src('start.ts')], {
      env: { ...env, ...ports },
      encoding: 'utf8',
      // a hang guard: a second stack that does not refuse would run until stopped
      timeout: 60_000,
      killSignal: 'SIGINT',
    })
    expect(second.status).toBe(1)
    expect(second.stderr).toBe(
      `[start]  a stack already runs on DATA_DIR ${env.DATA_DIR} (process ${child.pid}): stop it first (Ctrl-C where it runs, or kill -INT ${child.pid}), or set DATA_DIR to another folder\n`,
    )
    expect(readFileSync(join(env.DATA_DIR!, 'stack.pid'), 'utf8')).toBe(String(child.pid))
    expect(readFileSync(join(env.DATA_DIR!, 'stack.json'), 'utf8')).toBe(announced)
  })

  it('seeds the demo days DEMO_DAYS asks for, up to now', async () => {
    const { child, output } = running()
    await waitFor(child, output, /\[energy\] +demo data ready/)
    const { rows } = await databases[1]!.pool.query<{ first: Date; last: Date }>(
      'select min(time_15m) as first, max(time_15m) as last from data_15m',
    )
    const days = (rows[0]!.last.getTime() - rows[0]!.first.getTime()) / 86_400_000
    expect(days).toBeGreaterThan(2.9)
    expect(days).toBeLessThan(3.1)
  })

  it('Ctrl-C stops everything, a service starting again included; the next start (pnpm dev) shows the same details, and its watchers stop with it, even killed outright', async () => {
    const { child, output, exited } = running()
    if (!block) block = await waitFor(child, output, TRY_IT)
    // Ctrl-C while the data API starts again after a crash: it stops with the rest (a server left
    // running would hold its port)
    const crashed = energyServerOf(child.pid!)
    expect(crashed).toBeDefined()
    process.kill(crashed!, 'SIGKILL')
    let restarting: number | undefined
    while (!restarting) {
      const pid = energyServerOf(child.pid!)
      if (pid && pid !== crashed) restarting = pid
      else await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const stack = descendants(child.pid!)
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    first = undefined
    expect(stack.filter(alive)).toEqual([])
    // pnpm demo now: the same details (the live lines only while it runs), saying the stack is not running
    const stopped = spawnSync(NODE[0]!, [...NODE.slice(1), src('demo.ts')], { env, encoding: 'utf8' })
    expect(stopped.status).toBe(0)
    const shown = stopped.stdout.trim().split('\n')
    expect(shown.filter((line) => !block.includes(line))).toEqual([])
    expect(shown.some((line) => line.includes('API key'))).toBe(true)
    expect(stopped.stderr).toContain('The stack is not running: npm start (or pnpm start) starts it.')

    const again = startStack(['--watch'])
    expect(await waitFor(again.child, again.output, TRY_IT)).toBe(block)
    const family = descendants(again.child.pid!)
    // two watchers and the two services they run, at least
    expect(family.length).toBeGreaterThanOrEqual(4)
    again.child.kill('SIGKILL')
    while (family.some(alive)) await new Promise((resolve) => setTimeout(resolve, 200))
  })

  it('a taken port stops it at once, one line naming the variable that moves it, before any database opens', async () => {
    // the holders take ports the system hands out, so no other program can hold them first
    const holders = await Promise.all(
      [0, 0].map(
        () =>
          new Promise<Server>((resolve, reject) => {
            const holder = createServer()
            holder.once('error', reject)
            holder.listen(0, '127.0.0.1', () => resolve(holder))
          }),
      ),
    )
    const [oauthPort, mqttPort] = holders.map((holder) => String((holder.address() as AddressInfo).port))
    const before = env
    env = { ...env, OAUTH_PORT: oauthPort, MQTT_PORT: mqttPort }
    try {
      const { output, exited } = startStack()
      expect(await exited).toBe(1)
      expect(output()).toBe(
        `[start]  port ${oauthPort} (OAUTH_PORT) is taken by another program: set OAUTH_PORT to a free one\n` +
          `[start]  port ${mqttPort} (MQTT_PORT) is taken by another program: set MQTT_PORT to a free one, or MQTT_URL to your broker\n`,
      )
    } finally {
      env = before
      for (const holder of holders) holder.close()
    }
    // one port for two services is the same mistake
    const port = await freePort()
    const config = {
      HOST: '127.0.0.1',
      DATA_DIR: env.DATA_DIR!,
      OAUTH_PORT: port,
      ENERGY_PORT: port,
      MQTT_URL: 'mqtt://x',
    }
    expect((await portProblems(config)).filter((line) => line.includes(String(port)))).toEqual([
      `port ${port} is both OAUTH_PORT and ENERGY_PORT: set ENERGY_PORT to a free one`,
    ])
  })

  it('pnpm demo before any start says how to get the details', () => {
    const empty = { ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'stack-nodemo-')) }
    const result = spawnSync(NODE[0]!, [...NODE.slice(1), src('demo.ts')], { env: empty, encoding: 'utf8' })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('npm start (or pnpm start) prepares them on its first start')
  })
})

/** The data API's server below the stack `pid`, if one runs. */
function energyServerOf(pid: number): number | undefined {
  return descendants(pid).find((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('energy-data/src/server.ts')
    } catch {
      return false
    }
  })
}

/** Every process below `pid`, from /proc (Linux). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // "pid (comm) state ppid ...": the name may hold spaces, the rest follows the last ')'
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = []
  const visit = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child)
        visit(child)
      }
    }
  }
  visit(pid)
  return found
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
