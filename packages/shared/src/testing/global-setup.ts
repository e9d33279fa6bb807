/**
 * Once per `vitest run`: on a shared PostgreSQL server (`TEST_DATABASE_URL`), the migrated
 * templates the test files copied (`tpl_<service>_<digest>`, see database.ts) are dropped when
 * the run ends, so a run leaves the server as it found it; each test file drops its own copy.
 * Under the templates' advisory lock: a run still going on rebuilds what it needs.
 */
import pg from 'pg'
import { dropTemplates } from './database.ts'

export default function setup(): () => Promise<void> {
  return async () => {
    const serverUrl = process.env.TEST_DATABASE_URL
    if (!serverUrl) return
    const admin = new pg.Client({ connectionString: serverUrl })
    await admin.connect()
    try {
      await dropTemplates(admin)
    } finally {
      await admin.end()
    }
  }
}
