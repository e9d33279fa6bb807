import { answersAt } from '../net.ts'

/**
 * Whether tests that need an outside service (Redis, a PostgreSQL server) should run. They
 * always run under CI, which provides the services, so a missing one fails loudly there;
 * elsewhere they are skipped with one line saying why.
 */
export async function needsService(what: string, url: string | undefined): Promise<boolean> {
  if (url && (await answersAt(url))) return true
  if (process.env.CI) return true
  process.stdout.write(
    `[test] ${what} skipped: ${url ? `nothing answers at ${new URL(url).host}` : 'not configured'}; CI runs them\n`,
  )
  return false
}
