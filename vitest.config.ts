import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    pool: 'forks',
    // a worker runs file after file (each still gets its own database): the modules, and the optimized
    // code of PGlite's WebAssembly, are made once per worker instead of once per file
    isolate: false,
    // drops the migrated templates the run made on a shared PostgreSQL server, once it ends
    globalSetup: ['packages/shared/src/testing/global-setup.ts'],
    // test users' passwords hashed at a low (still argon2id) cost
    setupFiles: ['packages/oauth-server/test/setup.ts'],
    // three files at a time on two cores, each with its own database: a file waits on its child
    // processes, servers and browsers a good part of its time (a fresh clone's suite: 313 s with
    // two, 281 s with three, 285 s with four)
    maxWorkers: 3,
    // A hang guard, not a speed limit: a slow or busy machine never trips it, a test that hangs
    // still ends. Heavy cases are kept small instead (no test sets its own timeout).
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // expect.poll waits for pages and processes: vitest's default second is crossed by a page reload
    // under the whole suite's load (a guard, as above: a poll that is met returns at once)
    expect: { poll: { timeout: 30_000 } },
    reporters: ['default', 'json'],
    outputFile: { json: 'artifacts/test-results.json' },
  },
})
