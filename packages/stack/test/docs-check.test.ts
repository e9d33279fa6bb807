/**
 * scripts/check-docs.mjs, the part of `pnpm lint` that reads the documents: the slip that once
 * replaced docs/RELIABILITY.md with one paragraph repeated 204,000 times (15.9 MB) fails it, by
 * its size and, below the size bound, by the repetition; so does a link to a file that is gone.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SCRIPT = fileURLToPath(new URL('../../../scripts/check-docs.mjs', import.meta.url))
const check = (...files: string[]) => spawnSync(process.execPath, [SCRIPT, ...files], { encoding: 'utf8' })

const PARAGRAPH =
  '- Compressed exports stream too (`node bench/compression.ts`, each export on a fresh process,\n' +
  '  two busy cores): brotli 153.2 / 161.2 MB (6.2 MB), gzip 148.3 / 157.6 MB.'

function document(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'check-docs-')), name)
  writeFileSync(file, text)
  return file
}

describe('the documents check of pnpm lint', () => {
  it("passes on the project's own documents", () => {
    const result = check()
    expect(result.stdout).toMatch(/^check-docs: \d+ documents, no problem\n$/)
    expect(result.status).toBe(0)
  })

  it('fails on a document blown up by one paragraph repeated, over the size bound and under it', () => {
    const huge = document('RELIABILITY.md', `# Reliability\n\n${`${PARAGRAPH}\n\n`.repeat(20_000)}`)
    const big = check(huge)
    expect(big.status).toBe(1)
    expect(big.stdout).toMatch(/RELIABILITY\.md: \d+ kB, more than the 200 kB bound/)

    const small = document('RELIABILITY.md', `# Reliability\n\n${`${PARAGRAPH}\n\n`.repeat(3)}`)
    const repeated = check(small)
    expect(repeated.status).toBe(1)
    expect(repeated.stdout).toContain('a paragraph stands 3 times')
  })

  it('fails on a relative link to a file that does not exist, and takes links that resolve', () => {
    const dir = mkdtempSync(join(tmpdir(), 'check-docs-links-'))
    writeFileSync(join(dir, 'there.md'), '# There\n')
    const file = join(dir, 'README.md')
    writeFileSync(file, '# Doc\n\nSee [there](there.md#top), [gone](gone.md) and [site](https://example.org/x).\n')
    const result = check(file)
    expect(result.status).toBe(1)
    expect(result.stdout.trim().split('\n')).toEqual([`${file}: line 3: the link to gone.md names no file`])
  })
})
