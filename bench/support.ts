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

/** The median of `xs` (the upper one of an even count). */
export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

/**
 * One goal of `pnpm bench`: the ratio of ours to its baseline in each round (pairs measured side
 * by side), printed as its minimum and median and whether it is met. `at least` goals judge the
 * median unless `judge` says `min` (a goal that must hold in the worst round); `at most` goals
 * (times) judge the median too.
 */
export function goalLine(
  name: string,
  ratios: readonly number[],
  goal: { atLeast?: number; atMost?: number; judge?: 'min' | 'median'; unit?: 'x' | '%' },
): string {
  const unit = goal.unit ?? 'x'
  const show = (r: number) => (unit === '%' ? `${(r * 100).toFixed(1)}%` : `${r.toFixed(2)}x`)
  const low = Math.min(...ratios)
  const high = Math.max(...ratios)
  const mid = median(ratios)
  const judge = goal.judge ?? 'median'
  let met: boolean
  let target: string
  if (goal.atLeast !== undefined) {
    met = (judge === 'min' ? low : mid) >= goal.atLeast
    target = `>= ${show(goal.atLeast)} (${judge})`
  } else {
    // for a time ratio the worst round is the highest
    met = (judge === 'min' ? high : mid) <= (goal.atMost as number)
    target = `<= ${show(goal.atMost as number)} (${judge === 'min' ? 'max' : 'median'})`
  }
  const extreme = goal.atLeast !== undefined ? `min ${show(low)}` : `max ${show(high)}`
  return `GOAL ${name}: ${extreme}, median ${show(mid)} over ${ratios.length} rounds; goal ${target}: ${met ? 'MET' : 'NOT MET'}`
}
