/**
 * The ceiling: `psql \copy` of the same rows, as CSV, into a table keyed like `meter_samples` on a
 * database of its own. Timed from psql's start to its exit; psql reads its own CPU time and its
 * backend's from /proc before it quits (the backend ends with it).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { type Contender, cpuOfStatLine, scratchDatabase } from './contender.ts'

const SCRIPT = `\\copy samples (meter_id, at, reading, value) from pstdin with (format csv)
select pg_backend_pid() as backend \\gset
\\setenv BENCH_BACKEND :backend
\\! cat /proc/$PPID/stat /proc/$BENCH_BACKEND/stat
`

export async function startKeyedCopy(): Promise<Contender> {
  const database = await scratchDatabase('copy')
  const dir = mkdtempSync(join(tmpdir(), 'bench-copy-'))
  const script = join(dir, 'copy.psql')
  writeFileSync(script, SCRIPT)
  return {
    name: 'keyed COPY',
    databaseUrl: database.url,
    table: 'samples',
    load: async (csv) => {
      const started = performance.now()
      const psql = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', script, database.url], {
        stdio: ['pipe', 'pipe', 'pipe'],
      })
      let out = ''
      let err = ''
      psql.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8')
      })
      psql.stderr.on('data', (chunk: Buffer) => {
        err += chunk.toString('utf8')
      })
      psql.stdin.end(csv)
      const code = await new Promise<number | null>((resolve, reject) => {
        psql.once('error', reject)
        psql.once('close', resolve)
      })
      const seconds = (performance.now() - started) / 1000
      if (code !== 0) throw new Error(`psql \\copy failed: ${err}`)
      const stat = (command: string) => out.split('\n').find((l) => l.includes(`(${command})`))
      const processLine = stat('psql')
      const backendLine = stat('postgres')
      return {
        seconds,
        processCpu: processLine ? cpuOfStatLine(processLine) : Number.NaN,
        databaseCpu: backendLine ? cpuOfStatLine(backendLine) : Number.NaN,
      }
    },
    stop: async () => {
      rmSync(dir, { recursive: true, force: true })
      await database.drop()
    },
  }
}
