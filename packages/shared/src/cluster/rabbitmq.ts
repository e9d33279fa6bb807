/**
 * A RabbitMQ cluster of the machine's own RabbitMQ programs, on loopback ports of its own, its
 * state in one folder: `pnpm cluster up` and the tests that kill its nodes start it. Each node is
 * a process of this user (not the system service, never the machine's node on 5672), with the MQTT
 * plugin for the dataloggers; the nodes find each other by a fixed list (classic peer discovery)
 * and share an Erlang cookie through a HOME of the cluster's own. Users and their permissions are
 * a definitions file loaded at boot, so no command has to run against a half-started node.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { answersAt } from '../net.ts'

const run = promisify(execFile)

/** Where Debian installs RabbitMQ's own scripts (those in /usr/sbin switch to the rabbitmq user). */
const RABBITMQ_BIN = ['/usr/lib/rabbitmq/bin', '/usr/local/lib/rabbitmq/bin', '/opt/rabbitmq/sbin']

/** The folder holding rabbitmq-server and rabbitmqctl, or undefined when RabbitMQ is not installed. */
export function rabbitmqPrograms(): string | undefined {
  return RABBITMQ_BIN.find((dir) => existsSync(join(dir, 'rabbitmq-server')) && existsSync(join(dir, 'rabbitmqctl')))
}

export interface BrokerUser {
  name: string
  password: string
  /** Regular expressions of RabbitMQ's permissions (configure, write, read) on the vhost `/`. */
  configure: string
  write: string
  read: string
  /** Routing keys it may publish to on amq.topic (an MQTT topic with `/` read as `.`); absent: any. */
  topicWrite?: string
  tags?: string[]
}

export interface RabbitClusterOptions {
  /** The cluster's folder: each node's data, logs and the shared cookie. */
  dir: string
  /** How many nodes (3: a quorum queue outlives one). */
  nodes: number
  /** Node i (0-based) listens AMQP on basePort + i, MQTT on basePort + 10 + i, distribution on basePort + 20 + i. */
  basePort: number
  /** Node names are `<prefix><i + 1>@localhost`. */
  prefix: string
  users: BrokerUser[]
}

export interface RabbitNode {
  name: string
  amqp: string
  mqtt: string
  /** The Erlang VM's process id (what a kill -9 ends). */
  pid: number
  /** Its stdout and stderr. */
  log: string
}

/** RabbitMQ's stored form of a password (rabbit_password_hashing_sha256): base64(salt + sha256(salt + password)). */
export function rabbitPasswordHash(password: string): string {
  const salt = randomBytes(4)
  const digest = createHash('sha256')
    .update(Buffer.concat([salt, Buffer.from(password, 'utf8')]))
    .digest()
  return Buffer.concat([salt, digest]).toString('base64')
}

function definitions(users: BrokerUser[]): object {
  return {
    vhosts: [{ name: '/' }],
    users: users.map((u) => ({
      name: u.name,
      password_hash: rabbitPasswordHash(u.password),
      hashing_algorithm: 'rabbit_password_hashing_sha256',
      tags: u.tags ?? [],
    })),
    permissions: users.map((u) => ({ user: u.name, vhost: '/', configure: u.configure, write: u.write, read: u.read })),
    topic_permissions: users
      .filter((u) => u.topicWrite !== undefined)
      .map((u) => ({ user: u.name, vhost: '/', exchange: 'amq.topic', write: u.topicWrite, read: '^$' })),
  }
}

/** The RabbitMQ cluster's layout: each node's name, ports and folders, and the environment its programs need. */
export class RabbitCluster {
  readonly options: RabbitClusterOptions
  private readonly bin: string
  private readonly children = new Map<number, ChildProcess>()

  constructor(options: RabbitClusterOptions) {
    const bin = rabbitmqPrograms()
    if (!bin) throw new Error('RabbitMQ is not installed (apt-get install rabbitmq-server)')
    this.bin = bin
    this.options = options
  }

  nodeName(i: number): string {
    return `${this.options.prefix}${i + 1}@localhost`
  }

  amqpPort(i: number): number {
    return this.options.basePort + i
  }

  mqttPort(i: number): number {
    return this.options.basePort + 10 + i
  }

  private nodeDir(i: number): string {
    return join(this.options.dir, `node${i + 1}`)
  }

  /** The environment of RabbitMQ's programs for node i: nothing of the machine's own node's settings. */
  private env(i: number): NodeJS.ProcessEnv {
    const dir = this.nodeDir(i)
    return {
      PATH: process.env.PATH,
      // the cookie shared by the nodes and by rabbitmqctl (HOME/.erlang.cookie)
      HOME: join(this.options.dir, 'home'),
      LANG: 'C.UTF-8',
      // an empty environment file instead of /etc/rabbitmq/rabbitmq-env.conf (the machine's node's name)
      RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
      RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
      RABBITMQ_NODENAME: this.nodeName(i),
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: String(this.amqpPort(i)),
      RABBITMQ_DIST_PORT: String(this.options.basePort + 20 + i),
      RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
      RABBITMQ_LOG_BASE: join(dir, 'log'),
      RABBITMQ_LOGS: join(dir, 'log', 'node.log'),
      RABBITMQ_PID_FILE: join(dir, 'pid'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(this.options.dir, 'enabled_plugins'),
      ERL_EPMD_ADDRESS: '127.0.0.1',
      // a node that cannot boot writes its crash dump beside its logs, not in the current folder
      ERL_CRASH_DUMP: join(dir, 'log', 'erl_crash.dump'),
    }
  }

  /** Writes the cookie, the plugins, each node's configuration and the users' definitions (idempotent). */
  prepare(): void {
    const { dir, nodes } = this.options
    const home = join(dir, 'home')
    mkdirSync(home, { recursive: true })
    const cookie = join(home, '.erlang.cookie')
    if (!existsSync(cookie)) {
      writeFileSync(cookie, randomBytes(20).toString('hex').toUpperCase())
      chmodSync(cookie, 0o400)
    }
    writeFileSync(join(dir, 'enabled_plugins'), '[rabbitmq_mqtt].\n')
    writeFileSync(join(dir, 'definitions.json'), JSON.stringify(definitions(this.options.users), null, 2))
    const peers = Array.from(
      { length: nodes },
      (_, i) => `cluster_formation.classic_config.nodes.${i + 1} = ${this.nodeName(i)}`,
    )
    for (let i = 0; i < nodes; i++) {
      const nodeDir = this.nodeDir(i)
      mkdirSync(join(nodeDir, 'log'), { recursive: true })
      writeFileSync(join(nodeDir, 'rabbitmq-env.conf'), '')
      writeFileSync(
        join(nodeDir, 'rabbitmq.conf'),
        [
          `listeners.tcp.default = 127.0.0.1:${this.amqpPort(i)}`,
          `mqtt.listeners.tcp.default = 127.0.0.1:${this.mqttPort(i)}`,
          'mqtt.allow_anonymous = false',
          'mqtt.exchange = amq.topic',
          // the users come from the definitions: no guest
          'loopback_users = none',
          `load_definitions = ${join(dir, 'definitions.json')}`,
          'cluster_formation.peer_discovery_backend = classic_config',
          ...peers,
          // a small machine: a disk alarm would block publishers at the default 50 MB
          'disk_free_limit.absolute = 20MB',
          'log.console = true',
          'log.console.level = warning',
          'log.file = false',
          '',
        ].join('\n'),
      )
    }
  }

  /** Starts node i as a child of this process (`detached`: it outlives this process) and returns its VM's pid. */
  startNode(i: number, detached = false): ChildProcess {
    const log = join(this.nodeDir(i), 'log', 'console.log')
    const out = openSync(log, 'a')
    // the script execs the Erlang VM: the child's pid is the node's
    const child = spawn(join(this.bin, 'rabbitmq-server'), [], {
      env: this.env(i),
      stdio: ['ignore', out, out],
      detached,
    })
    if (detached) child.unref()
    this.children.set(i, child)
    return child
  }

  /** Node i's VM pid as it wrote it (undefined before it did). */
  pid(i: number): number | undefined {
    const file = join(this.nodeDir(i), 'pid')
    if (!existsSync(file)) return undefined
    const pid = Number(readFileSync(file, 'utf8').trim())
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  }

  /** rabbitmqctl (or rabbitmq-queues) against node i; its stdout. */
  async ctl(i: number, args: string[], program = 'rabbitmqctl', timeoutMs = 60_000): Promise<string> {
    const { stdout } = await run(join(this.bin, program), ['-n', this.nodeName(i), ...args], {
      env: this.env(i),
      timeout: timeoutMs,
    })
    return stdout
  }

  /** Waits until node i runs the broker and answers on its AMQP and MQTT ports. */
  async awaitNode(i: number, timeoutMs = 180_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const exited = this.children.get(i)?.exitCode
      if (exited !== null && exited !== undefined) {
        throw new Error(`RabbitMQ node ${this.nodeName(i)} exited (${exited}): ${this.tail(i)}`)
      }
      if (
        (await answersAt(`amqp://127.0.0.1:${this.amqpPort(i)}`)) &&
        (await answersAt(`mqtt://127.0.0.1:${this.mqttPort(i)}`))
      )
        return
      if (Date.now() > deadline) throw new Error(`RabbitMQ node ${this.nodeName(i)} not up in time: ${this.tail(i)}`)
      await new Promise((r) => setTimeout(r, 500))
    }
  }

  /** The end of node i's console output (why it failed). */
  tail(i: number): string {
    const file = join(this.nodeDir(i), 'log', 'console.log')
    if (!existsSync(file)) return '(no output)'
    const text = readFileSync(file, 'utf8')
    // the first error says why; the end, where it stopped
    const first = text.search(/error/i)
    return `${first >= 0 ? text.slice(first, first + 1500) : ''}\n...\n${text.slice(-800)}`
  }

  /** Waits until `running` nodes of the cluster run, as node i sees it. */
  async awaitMembers(i: number, running: number, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      try {
        const status = JSON.parse(await this.ctl(i, ['cluster_status', '--formatter', 'json'])) as {
          running_nodes?: string[]
        }
        if ((status.running_nodes?.length ?? 0) >= running) return
      } catch {
        // not answering yet
      }
      if (Date.now() > deadline) throw new Error(`the RabbitMQ cluster has not ${running} running nodes in time`)
      await new Promise((r) => setTimeout(r, 1000))
    }
  }

  /**
   * Starts the nodes one after the other, each accepting MQTT before the next starts (they join by
   * the list), and waits for the cluster. Nodes booting together may form MQTT client-id tracking
   * (Raft) clusters of their own, and a node left outside closes every MQTT connection before its
   * CONNACK: on this machine four boots of three nodes together in four, and one in one when only
   * the first was up before the other two started together.
   */
  async start(detached = false): Promise<RabbitNode[]> {
    this.prepare()
    const user = this.options.users[0]
    for (let i = 0; i < this.options.nodes; i++) {
      this.startNode(i, detached)
      await this.awaitNode(i)
      if (user) await this.awaitMqttOn(i, user)
    }
    await this.awaitMembers(0, this.options.nodes)
    return this.describe()
  }

  describe(): RabbitNode[] {
    return Array.from({ length: this.options.nodes }, (_, i) => ({
      name: this.nodeName(i),
      amqp: `amqp://127.0.0.1:${this.amqpPort(i)}`,
      mqtt: `mqtt://127.0.0.1:${this.mqttPort(i)}`,
      pid: this.pid(i) ?? this.children.get(i)?.pid ?? 0,
      log: join(this.nodeDir(i), 'log', 'console.log'),
    }))
  }

  /**
   * Waits until every node's MQTT listener accepts `user` (CONNACK 0): a cluster just formed
   * answers "server unavailable" until its nodes agree on MQTT client ids.
   */
  async awaitMqtt(user: { name: string; password: string }, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (let i = 0; i < this.options.nodes; i++) await this.awaitMqttOn(i, user, deadline - Date.now())
  }

  /** Waits until node i's MQTT listener accepts `user` (CONNACK 0). */
  async awaitMqttOn(i: number, user: { name: string; password: string }, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const code = await mqttConnack(this.mqttPort(i), user).catch(() => -1)
      if (code === 0) return
      if (Date.now() > deadline) throw new Error(`RabbitMQ node ${this.nodeName(i)} refuses MQTT (${code})`)
      await new Promise((r) => setTimeout(r, 500))
    }
  }

  /** The node leading a quorum queue now (its index), as node `asked` sees it. */
  async leaderOf(queue: string, asked: number): Promise<number | undefined> {
    const rows = JSON.parse(await this.ctl(asked, ['list_queues', 'name', 'leader', '--formatter', 'json'])) as Array<{
      name: string
      leader: string
    }>
    const leader = rows.find((r) => r.name === queue)?.leader
    const index = Array.from({ length: this.options.nodes }, (_, i) => i).find((i) => this.nodeName(i) === leader)
    return index
  }

  /** kill -9 of node i's VM; resolves once it is gone. */
  async kill(i: number): Promise<void> {
    const pid = this.pid(i) ?? this.children.get(i)?.pid
    if (!pid) return
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      return
    }
    while (alive(pid)) await new Promise((r) => setTimeout(r, 50))
  }

  /** Stops every node (rabbitmqctl stop: the node's own orderly shutdown), killing what does not stop. */
  async stop(): Promise<void> {
    await Promise.all(
      Array.from({ length: this.options.nodes }, async (_, i) => {
        const pid = this.pid(i)
        if (!pid || !alive(pid)) return
        await this.ctl(i, ['stop'], 'rabbitmqctl', 30_000).catch(() => undefined)
        const deadline = Date.now() + 15_000
        while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
        if (alive(pid)) await this.kill(i)
      }),
    )
  }
}

/** Whether a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The return code of an MQTT 3.1.1 CONNACK for a clean session of `user` (then DISCONNECT). */
export function mqttConnack(port: number, user: { name: string; password: string }): Promise<number> {
  const field = (text: string) => {
    const bytes = Buffer.from(text, 'utf8')
    const length = Buffer.alloc(2)
    length.writeUInt16BE(bytes.length)
    return Buffer.concat([length, bytes])
  }
  // protocol name, level 4, flags (username, password, clean session), keepalive 10 s
  const body = Buffer.concat([
    field('MQTT'),
    Buffer.from([4, 0xc2, 0, 10]),
    field(`probe-${process.pid}-${port}`),
    field(user.name),
    field(user.password),
  ])
  const length: number[] = []
  let rest = body.length
  do {
    let byte = rest % 128
    rest = Math.floor(rest / 128)
    if (rest > 0) byte |= 0x80
    length.push(byte)
  } while (rest > 0)
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    socket.setTimeout(5000, () => socket.destroy(new Error('no CONNACK in 5 s')))
    socket.once('error', reject)
    socket.once('close', () => reject(new Error('closed before CONNACK')))
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from([0x10, ...length]), body])))
    socket.once('data', (data: Buffer) => {
      const code = data[0] === 0x20 ? (data[3] ?? -1) : -1
      socket.end(Buffer.from([0xe0, 0]))
      resolve(code)
    })
  })
}
