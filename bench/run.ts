/**
 * `pnpm bench [name...]` (`npm run bench -- [name...]`): runs the benchmarks in this folder one
 * after another (all but the 60-second soaks; or, for each name, the file of that name,
 * `pnpm bench energy` is `energy.ts`, else those whose file name contains it, `pnpm bench soak`),
 * each as its own process so they never share a heap. Each prints its figures against the
 * baseline it runs side by side.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { programAsTyped } from '../packages/shared/src/index.ts'
import { dropTemplates } from '../packages/shared/src/testing/index.ts'
import { BENCH_SERVER_URL } from './support.ts'

const here = fileURLToPath(new URL('.', import.meta.url))
const filters = process.argv.slice(2)
const all = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.includes('support'))
  .sort()
const named = (name: string) => {
  const exact = all.filter((f) => f === `${name.replace(/\.ts$/, '')}.ts`)
  return exact.length ? exact : all.filter((f) => f.includes(name))
}
const benches =
  filters.length === 0 ? all.filter((f) => !f.startsWith('soak-')) : [...new Set(filters.flatMap(named))].sort()

const names = all.map((f) => f.replace(/\.ts$/, '')).join(' ')
if (filters.some((f) => ['--help', '-h', 'help'].includes(f))) {
  process.stdout.write(
    `usage: ${programAsTyped('pnpm bench')} [name...]   (none: all but the soak-* ones)\nbenchmarks: ${names}\n`,
  )
  process.exit(0)
}
if (benches.length === 0) {
  process.stderr.write(`no benchmark matches ${filters.join(', ')}; the benchmarks: ${names}\n`)
  process.exit(2)
}
let failed = 0
for (const file of benches) {
  process.stdout.write(`\n=== ${file}\n`)
  const result = spawnSync(process.execPath, ['--experimental-strip-types', `${here}${file}`], { stdio: 'inherit' })
  if (result.status !== 0) failed++
}
// each bench drops its databases; the migrated templates they were copied from go at the end, as
// at the end of a test run (a bench still running elsewhere makes again what it needs)
const admin = new pg.Client({ connectionString: BENCH_SERVER_URL })
try {
  await admin.connect()
  await dropTemplates(admin)
} catch (error) {
  process.stderr.write(
    `the benches' templates were left on ${new URL(BENCH_SERVER_URL).host}: ${(error as Error).message}\n`,
  )
} finally {
  await admin.end().catch(() => undefined)
}
process.exit(failed ? 1 : 0)
