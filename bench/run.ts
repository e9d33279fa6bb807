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
