#!/usr/bin/env node
/**
 * The checks of the project's documents that a Markdown linter does not make (`pnpm lint` runs
 * markdownlint-cli2 first, then this):
 *   - a size bound per document, so a script's slip that multiplies a file cannot land;
 *   - no paragraph of any length standing three times or more in one document (the same slip
 *     below the bound);
 *   - every relative link names a file or folder that exists.
 *
 *   node scripts/check-docs.mjs [FILE...]    default: every Markdown file git tracks
 * Prints one line per problem and exits 1 when there is any.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** The largest document is about 50 kB; four times that is no longer a document anyone reads. */
export const MAX_BYTES = 200 * 1024
/** A paragraph this long repeated this often is a slip, not a refrain. */
const MIN_PARAGRAPH = 80
const MAX_REPEATS = 2

/** What is wrong with the Markdown `text` of `file` (a path, for relative links). */
export function problems(file, text) {
  const found = []
  const bytes = Buffer.byteLength(text)
  if (bytes > MAX_BYTES) found.push(`${Math.round(bytes / 1024)} kB, more than the ${MAX_BYTES / 1024} kB bound`)
  const seen = new Map()
  for (const paragraph of text.split(/\n\s*\n/)) {
    const key = paragraph.trim()
    if (key.length < MIN_PARAGRAPH || key.startsWith('|') || key.startsWith('```')) continue
    seen.set(key, (seen.get(key) ?? 0) + 1)
  }
  for (const [paragraph, count] of seen) {
    if (count > MAX_REPEATS) found.push(`a paragraph stands ${count} times: "${paragraph.slice(0, 60)}..."`)
  }
  let inFence = false
  text.split('\n').forEach((line, i) => {
    if (line.trimStart().startsWith('```')) inFence = !inFence
    if (inFence) return
    for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^([a-z]+:|#)/i.test(target)) continue
      const path = decodeURIComponent(target.split('#')[0])
      if (!existsSync(join(dirname(file), path))) found.push(`line ${i + 1}: the link to ${target} names no file`)
    }
  })
  return found
}

function main() {
  const files = process.argv.slice(2)
  const documents = files.length
    ? files.map((f) => resolve(f))
    : execFileSync('git', ['ls-files', '*.md'], { cwd: root, encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((f) => join(root, f))
  let failed = 0
  const report = (file, problem) => {
    process.stdout.write(`${file.startsWith(root) ? file.slice(root.length + 1) : file}: ${problem}\n`)
    failed++
  }
  for (const file of documents) {
    // the size first: a runaway file is not read whole
    const size = statSync(file).size
    if (size > MAX_BYTES) report(file, `${Math.round(size / 1024)} kB, more than the ${MAX_BYTES / 1024} kB bound`)
    else for (const problem of problems(file, readFileSync(file, 'utf8'))) report(file, problem)
  }
  if (failed) process.exit(1)
  process.stdout.write(`check-docs: ${documents.length} documents, no problem\n`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main()
