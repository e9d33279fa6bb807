/** The energy CLI as a client of running services, run as its own process by the stack tests. */
import { spawnService } from '@campus/shared'
import { energyService } from '../../energy-data/src/service.ts'

/** The line `pnpm energy login` shows: the address to open and the code to enter. */
export const LOGIN_PROMPT = /open (\S+) and enter the code ([A-Z]{4}-[A-Z]{4})/

/** `pnpm energy ...` as its own process (its configuration directory and the services' URLs in `env`); stdout kept apart, stderr by line. */
export function energyCli(env: Record<string, string>, args: string[], onStderr: (line: string) => void = () => {}) {
  let stdout = ''
  const process = spawnService(energyService, {
    entry: 'cli',
    args,
    env: { LOG_LEVEL: 'silent', ...env },
    inheritEnv: false,
  })
  process.child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8')
  })
  let pending = ''
  process.child.stderr?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8')
    const lines = pending.split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) onStderr(line)
  })
  return { exited: process.exited, stdout: () => stdout, output: process.output }
}
