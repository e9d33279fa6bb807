import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'

/** A service running as a real child process (its own event loop, signals, exit code). */
export interface ServiceProcess {
  readonly url: string
  readonly port: number
  readonly child: ChildProcess
  /** Everything it wrote on stdout and stderr so far. */
  output(): string
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>
  /** Sends `signal` and waits for the exit; SIGKILL after `timeoutMs`. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>
}

/** A loopback port the kernel just handed out and released (the child binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/**
 * Runs `node <script>` with `env` (plus `portVariable` set to a free port and HOST=127.0.0.1)
 * and waits until `readyPath` answers 200 (`/health/ready` by default).
 */
export async function startServiceProcess(options: {
  script: string
  env: Record<string, string>
  portVariable: string
  readyPath?: string
  timeoutMs?: number
  /** Output kept, from the start (bytes); later output is dropped. */
  maxOutput?: number
}): Promise<ServiceProcess> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = spawn(
    process.execPath,
    ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', options.script],
    {
      env: { ...process.env, HOST: '127.0.0.1', ...options.env, [options.portVariable]: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const maxOutput = options.maxOutput ?? 64 * 1024 * 1024
  let output = ''
  const keep = (chunk: Buffer) => {
    if (output.length < maxOutput) output += chunk.toString('utf8')
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let done = false
  void exited.then(() => {
    done = true
  })

  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  for (;;) {
    if (done) throw new Error(`${options.script} exited before it was ready:\n${output.slice(-4000)}`)
    const ok = await fetch(url + (options.readyPath ?? '/health/ready'))
      .then((r) => r.status === 200)
      .catch(() => false)
    if (ok) break
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`${options.script} not ready within the timeout:\n${output.slice(-4000)}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }

  return {
    url,
    port,
    child,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM', timeoutMs = 20_000) {
      if (done) return exited
      child.kill(signal)
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
      try {
        return await exited
      } finally {
        clearTimeout(timer)
      }
    },
  }
}
