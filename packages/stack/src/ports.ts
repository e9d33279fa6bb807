/**
 * The ports `pnpm start` listens on, checked before anything starts: one taken by another
 * program (3000 often is) is said in one line naming its variable, at once, instead of a
 * service failing to listen after the databases have opened. The embedded databases listen on
 * ports the system picks; they need no check.
 */
import { createServer } from 'node:net'
import { ingestService } from '@campus/ingest/service'
import { serviceEndpoints } from '@campus/shared'
import { type StackConfig, services } from './services.ts'

interface Wanted {
  variable: string
  port: number
  /** What else the line suggests. */
  otherwise?: string
}

/** Each port the stack will listen on, with the variable that sets it. */
export function stackPorts(config: StackConfig): Wanted[] {
  const wanted: Wanted[] = [...services, ingestService].map((descriptor) => ({
    variable: descriptor.portEnv,
    port: serviceEndpoints(descriptor, config).port,
  }))
  if (!config.MQTT_URL) {
    wanted.push({ variable: 'MQTT_PORT', port: Number(config.MQTT_PORT), otherwise: 'or MQTT_URL to your broker' })
  }
  return wanted
}

/** Why `port` cannot be listened on at `host` (its error code), or undefined when it can. */
function tryListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)))
  })
}

/** One line for each port that cannot be used (none when all are free). */
export async function portProblems(config: StackConfig): Promise<string[]> {
  const wanted = stackPorts(config)
  const lines: string[] = []
  const seen = new Map<number, string>()
  for (const { variable, port, otherwise } of wanted) {
    const fix = `set ${variable} to a free one${otherwise ? `, ${otherwise}` : ''}`
    const first = seen.get(port)
    if (first) {
      lines.push(`port ${port} is both ${first} and ${variable}: ${fix}`)
      continue
    }
    seen.set(port, variable)
    const problem = await tryListen(config.HOST, port)
    if (problem === 'EADDRINUSE') lines.push(`port ${port} (${variable}) is taken by another program: ${fix}`)
    else if (problem === 'EACCES') lines.push(`port ${port} (${variable}) needs privileges this user lacks: ${fix}`)
    else if (problem)
      lines.push(`port ${port} (${variable}) cannot be listened on at ${config.HOST} (${problem}): ${fix}`)
  }
  return lines
}
