/**
 * `pnpm start`: both services on the embedded database, in one terminal.
 *
 * This process owns the embedded PGlite directories (`.data/oauth`, `.data/energy`), serves them
 * on loopback ports and migrates them; then it runs each service as its own process pointed at
 * its database (the data API wired to accept the OAuth server's tokens, `identity.ts`), prefixes
 * their output, prepares demo data once, and stops everything on Ctrl-C.
 * A service whose *_DATABASE_URL is set uses that server instead.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { oauthService } from '@campus/oauth-server/service'
import {
  launchService,
  runMain,
  type ServiceDatabase,
  type ServiceProcess,
  serviceEndpoints,
  spawnService,
} from '@campus/shared'
import { openAndMigrate } from './databases.ts'
import { identityConsumer, wireIdentity } from './identity.ts'
import { prettyLine } from './pretty.ts'
import { loadStackConfig, services } from './services.ts'

/** Each line of a child, shortened and prefixed with its service's name. */
function prefixed(name: string) {
  const tag = `[${name}]`.padEnd(9)
  return (line: string, stream: 'stdout' | 'stderr') =>
    (stream === 'stdout' ? process.stdout : process.stderr).write(`${tag}${prettyLine(line)}\n`)
}

runMain(async () => {
  const config = loadStackConfig()
  const watch = process.argv.includes('--watch')
  const databases: Array<ServiceDatabase<unknown>> = []
  const children = new Set<ServiceProcess>()
  let stopping = false

  const stopAll = async (code: number) => {
    if (stopping) return
    stopping = true
    await Promise.all([...children].map((child) => child.stop('SIGTERM', 15_000)))
    for (const database of databases) await database.close()
    process.exit(code)
  }
  // Scripts and supervisors find the stack here (stop it with SIGINT or SIGTERM to this pid or its group).
  const pidFile = resolve(config.DATA_DIR, 'stack.pid')
  mkdirSync(dirname(pidFile), { recursive: true })
  writeFileSync(pidFile, String(process.pid))
  process.on('exit', () => rmSync(pidFile, { force: true }))
  process.on('SIGINT', () => void stopAll(0))
  process.on('SIGTERM', () => void stopAll(0))

  // both databases open and migrate at once: a cold embedded start costs seconds each
  const urls = new Map<string, string>()
  await Promise.all(
    services.map(async (descriptor) => {
      const { database, result } = await openAndMigrate(descriptor, config)
      databases.push(database)
      const note = result.applied.length ? `applied ${result.applied.length} migration(s)` : 'schema up to date'
      process.stdout.write(`[db]     ${descriptor.name}: ${database.description}, ${note}\n`)
      urls.set(descriptor.name, database.url)
    }),
  )

  // the data API accepts the OAuth server's tokens: its client is registered before either starts
  const identity = await wireIdentity(config, urls.get(oauthService.name), prefixed(oauthService.name))
  const envOf = (name: string): Record<string, string | undefined> => ({
    [services.find((s) => s.name === name)!.databaseUrlEnv]: urls.get(name),
  })
  const launched = Promise.all(
    services.map(async (descriptor) => {
      const service = await launchService(descriptor, {
        port: serviceEndpoints(descriptor, config).port,
        host: config.HOST,
        env: {
          ...envOf(descriptor.name),
          ...(descriptor.name === identityConsumer ? identity : {}),
          MIGRATE_ON_START: 'false',
        },
        watch,
        onLine: prefixed(descriptor.name),
        maxOutput: 0,
      })
      children.add(service)
      void service.exited.then((code) => {
        if (stopping) return
        process.stderr.write(`[${descriptor.name}] exited with code ${code}; stopping\n`)
        void stopAll(code || 1)
      })
    }),
  )
  try {
    await launched
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    await stopAll(1)
  }
  if (stopping) return
  const lines = services.map(
    (d) => `  ${d.title.padEnd(16)} http://${config.HOST}:${serviceEndpoints(d, config).port}/docs`,
  )
  process.stdout.write(`\nReady. Press Ctrl-C to stop.\n${lines.join('\n')}\n\n`)

  // Each service's `demo` command fills an empty database once and prints how to try it;
  // the services already answer meanwhile.
  await Promise.all(
    services.map(async (descriptor) => {
      const demo = spawnService(descriptor, {
        entry: 'cli',
        args: ['demo'],
        env: {
          ...envOf(descriptor.name),
          HOST: config.HOST,
          [descriptor.portEnv]: String(serviceEndpoints(descriptor, config).port),
          MIGRATE_ON_START: 'false',
        },
        onLine: prefixed(descriptor.name),
        maxOutput: 0,
      })
      children.add(demo)
      const code = await demo.exited
      children.delete(demo)
      if (code !== 0 && !stopping) {
        process.stderr.write(`[${descriptor.name}] demo data could not be prepared (exit ${code})\n`)
      }
    }),
  )
})
