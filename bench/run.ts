/**
 * `pnpm bench [name...]`: runs the benchmarks in this folder one after another (all but the
 * 60-second soaks, or those whose file name contains one of the names: `pnpm bench soak`), each
 * as its own process so they never share a heap. Each prints its figures against the baseline
 * it runs side by side.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))
const filters = process.argv.slice(2)
const benches = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.includes('support'))
  .filter((f) => (filters.length === 0 ? !f.startsWith('soak-') : filters.some((name) => f.includes(name))))
  .sort()

if (benches.length === 0) {
  process.stderr.write(`no benchmark matches ${filters.join(', ')}\n`)
  process.exit(1)
}
let failed = 0
for (const file of benches) {
  process.stdout.write(`\n=== ${file}\n`)
  const result = spawnSync(process.execPath, ['--experimental-strip-types', `${here}${file}`], { stdio: 'inherit' })
  if (result.status !== 0) failed++
}
process.exit(failed ? 1 : 0)
