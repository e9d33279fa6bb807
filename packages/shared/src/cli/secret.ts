/**
 * A secret a command needs (a password), kept out of shell history and `ps`: typed at a prompt
 * that does not echo it, or read from standard input (`--<name>-stdin`). `--<name> VALUE` still
 * works, for scripts that already use it, and is documented as discouraged.
 *
 * Hand-written (about 40 lines over node:tty): node:readline has no silent mode, and a package
 * for one prompt would be a dependency of every service image.
 */
import { commandFailed, usageError } from './commands.ts'

/** The flags a command declares for a secret named `name` (spread into its parseFlags options). */
export const secretFlags = (name: string) =>
  ({ [name]: { type: 'string' }, [`${name}-stdin`]: { type: 'boolean' } }) as const

/**
 * The secret from the parsed flags: `--<name>-stdin`, else `--<name>`, else a prompt (asked twice)
 * when standard input is a terminal; otherwise a usage error saying how to give it.
 */
export async function readSecret(values: Record<string, unknown>, name: string): Promise<string> {
  const fromFlag = values[name]
  if (values[`${name}-stdin`] === true) {
    if (typeof fromFlag === 'string') throw usageError(`give --${name} or --${name}-stdin, not both`)
    const text = (await readAll()).replace(/\r?\n$/, '')
    if (!text) throw usageError(`--${name}-stdin: standard input held no ${name}`)
    return text
  }
  if (typeof fromFlag === 'string' && fromFlag !== '') return fromFlag
  if (!process.stdin.isTTY) {
    throw usageError(`--${name} is required: type it at the prompt (in a terminal) or pipe it with --${name}-stdin`)
  }
  const first = await promptHidden(`${name[0]?.toUpperCase()}${name.slice(1)}: `)
  if (!first) throw usageError(`an empty ${name} is not accepted`)
  const again = await promptHidden(`${name[0]?.toUpperCase()}${name.slice(1)} again: `)
  if (again !== first) throw commandFailed(`the two ${name}s differ`)
  return first
}

async function readAll(): Promise<string> {
  let text = ''
  for await (const chunk of process.stdin) text += chunk.toString()
  return text
}

/** A line typed at the terminal, not echoed (Backspace edits, Ctrl-C or Ctrl-D cancels). */
function promptHidden(question: string): Promise<string> {
  const input = process.stdin
  // echo off before the question shows: what is typed as soon as it appears is not echoed either
  input.setRawMode(true)
  process.stderr.write(question)
  input.setEncoding('utf8')
  input.resume()
  return new Promise((resolve, reject) => {
    let value = ''
    const finish = (error?: Error) => {
      input.off('data', onData)
      input.setRawMode(false)
      input.pause()
      process.stderr.write('\n')
      if (error) reject(error)
      else resolve(value)
    }
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return finish()
        if (char === '\u0003' || char === '\u0004') return finish(commandFailed('cancelled'))
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1)
        else value += char
      }
    }
    input.on('data', onData)
  })
}
