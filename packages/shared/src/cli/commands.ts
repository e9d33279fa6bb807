/**
 * The one shape of a service's command line (`pnpm oauth ...`, `pnpm energy ...`): a table of
 * commands, each with its usage line; JSON on stdout; errors on stderr as `error: ...`; exit
 * code 0 on success, 2 for a usage mistake (with the usage lines), 1 for a failure.
 */
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util'
import { ConfigError } from '../config.ts'

export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2

/**
 * What a command refuses to do: `usage` when the command line itself is wrong (exit 2, the
 * usage is printed), `failure` when it was right but the work cannot be done (exit 1).
 */
export class CommandError extends Error {
  override name = 'CommandError'
  readonly kind: 'usage' | 'failure'

  constructor(kind: 'usage' | 'failure', message: string) {
    super(message)
    this.kind = kind
  }

  get exitCode(): number {
    return this.kind === 'usage' ? EXIT_USAGE : EXIT_FAILURE
  }
}

export const usageError = (message: string): CommandError => new CommandError('usage', message)
export const commandFailed = (message: string): CommandError => new CommandError('failure', message)

export interface Command<Context> {
  /** `name --flag VALUE [--optional]`: one line of the usage text. */
  readonly usage: string
  /** false: a client of a running service, needing nothing `open` gives: it is not called, and `run` must not read its context */
  readonly opens?: boolean
  /** What it answers is printed as JSON; undefined prints nothing (the command wrote stdout itself). */
  run(context: Context, args: string[]): Promise<unknown>
}

/** Flags as `node:util` parses them (`--no-<flag>` turns a boolean off); a mistake is a usage error. */
export function parseFlags<const T extends ParseArgsOptionsConfig>(
  args: string[],
  options: T,
  settings: { positionals?: boolean } = {},
) {
  try {
    return parseArgs({
      args,
      options,
      strict: true,
      allowPositionals: settings.positionals ?? false,
      allowNegative: true,
    })
  } catch (error) {
    throw usageError((error as Error).message)
  }
}

/** A flag that must be given with a non-empty value. */
export function requiredFlag(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw usageError(`--${name} is required`)
  return value
}

const HELP = new Set(['--help', '-h', 'help'])

/** Whether the arguments ask for the usage (`--help`, `-h`, `help`). */
export const asksForHelp = (args: readonly string[]): boolean => args.some((arg) => HELP.has(arg))

/** Scripts npm runs by their own name (`npm start`, not `npm run start`). */
const NPM_COMMANDS = new Set(['start', 'test', 'stop', 'restart'])

/**
 * The program as the person typed it: `npm run oauth --` (or `npm start --`) when npm ran it (the
 * README's form), else the program's name (`pnpm oauth`).
 */
export function programAsTyped(program: string, env: NodeJS.ProcessEnv = process.env): string {
  const script = /^pnpm (\S+)$/.exec(program)?.[1]
  if (!script || !env.npm_config_user_agent?.startsWith('npm/')) return program
  return NPM_COMMANDS.has(script) ? `npm ${script} --` : `npm run ${script} --`
}

function usageText<Context>(program: string, commands: Record<string, Command<Context>>): string {
  return `usage: ${program} <command>\n${Object.values(commands)
    .map((c) => `  ${c.usage}`)
    .join('\n')}`
}

/**
 * Exits once stdout and stderr have handed everything to the system. `process.exit` alone drops
 * what a pipe has not taken yet: `| head`, `| jq` or a file through a shell got the first 64 KiB
 * (one pipe buffer) and exit code 0.
 */
export async function exitAfterOutput(code: number): Promise<never> {
  await Promise.all(
    [process.stdout, process.stderr].map(
      // an empty write's callback runs after every write before it (or on the reader's EPIPE)
      (stream) =>
        new Promise<void>((resolve) => (stream.writableLength === 0 ? resolve() : stream.write('', () => resolve()))),
    ),
  )
  process.exit(code)
}

/**
 * Runs the command named by `argv[0]` with the rest as its arguments and exits: `open` gives
 * what commands work with (the service's database, checked for pending migrations) and is
 * closed after the command, whatever happened (a command with `opens: false` skips it).
 */
export async function runCommandLine<Context>(options: {
  program: string
  commands: Record<string, Command<Context>>
  open: () => Promise<{ context: Context; close(): Promise<void> }>
  argv?: string[]
}): Promise<never> {
  const [name, ...args] = options.argv ?? process.argv.slice(2)
  const program = programAsTyped(options.program)
  const usage = usageText(program, options.commands)
  const command = name && Object.hasOwn(options.commands, name) ? options.commands[name] : undefined
  // asked for: the usage on stdout, exit 0 (a mistake gets it on stderr, exit 2)
  if (name !== undefined && HELP.has(name)) {
    process.stdout.write(`${usage}\n`)
    return exitAfterOutput(0)
  }
  if (command && asksForHelp(args)) {
    process.stdout.write(`usage: ${program} ${command.usage}\n`)
    return exitAfterOutput(0)
  }
  if (!command) {
    process.stderr.write(`${name ? `error: unknown command ${name}\n` : ''}${usage}\n`)
    return exitAfterOutput(EXIT_USAGE)
  }
  let code: number = EXIT_FAILURE
  try {
    const { context, close } =
      command.opens === false ? { context: undefined as Context, close: async () => {} } : await options.open()
    try {
      const result = await command.run(context, args)
      if (result !== undefined) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
      code = 0
    } finally {
      await close()
    }
  } catch (error) {
    if (error instanceof CommandError) {
      process.stderr.write(`error: ${error.message}\n${error.kind === 'usage' ? `${usage}\n` : ''}`)
      code = error.exitCode
    } else if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`)
    } else {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`)
      if (process.env.DEBUG) console.error(error)
    }
  }
  return exitAfterOutput(code)
}
