/**
 * A command's output reaches a pipe whole: the command line exits only once stdout has handed
 * everything over (before, `| jq` or `| wc -c` got the first 65,536 bytes, one pipe buffer, and
 * exit code 0). Through a real shell pipe whose reader starts late, so the buffer is full first.
 */
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'

const commands = new URL('../src/cli/commands.ts', import.meta.url).href

/** A command line of one command printing `bytes` of JSON, as the services' are built. */
const program = (bytes: number) => `
import { runCommandLine } from '${commands}'
await runCommandLine({
  program: 'test',
  commands: { big: { usage: 'big', opens: false, run: async () => ({ text: 'x'.repeat(${bytes}) }) } },
  open: async () => { throw new Error('unused') },
  argv: ['big'],
})
`

describe('command output through a pipe', () => {
  it('a command printing a megabyte to a pipe that is read late delivers all of it, exit 0', () => {
    const bytes = 1_000_000
    const shell = spawnSync(
      'bash',
      // pipefail: the exit code is the command's, not wc's
      [
        '-o',
        'pipefail',
        '-c',
        '"$NODE" --disable-warning=ExperimentalWarning --input-type=module -e "$PROGRAM" | (sleep 1; wc -c)',
      ],
      { env: { ...process.env, NODE: process.execPath, PROGRAM: program(bytes) }, encoding: 'utf8' },
    )
    expect(shell.stderr).toBe('')
    // {"text": "..."} pretty-printed, and its line break
    expect(Number(shell.stdout.trim())).toBe(JSON.stringify({ text: 'x'.repeat(bytes) }, null, 2).length + 1)
    expect(shell.status).toBe(0)
  })
})
