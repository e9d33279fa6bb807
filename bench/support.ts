/** What every benchmark shares: the PostgreSQL server it runs on, and a fresh database of its own there. */
import type { TestDatabase } from '../packages/shared/src/testing/index.ts'

/** The server benchmarks make their databases on. */
export const BENCH_SERVER_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** A fresh, migrated database on `serverUrl`, made as the tests make theirs; `close` drops it. */
export async function benchDatabase<DB>(
  name: string,
  migrationsDir: string,
  serverUrl = BENCH_SERVER_URL,
): Promise<TestDatabase<DB>> {
  process.env.TEST_DATABASE_URL = serverUrl
  const { createTestDatabase } = await import('../packages/shared/src/testing/index.ts')
  return createTestDatabase<DB>(name, migrationsDir)
}
