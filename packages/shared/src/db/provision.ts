import pg from 'pg'

/** PostgreSQL's "invalid catalog name": the database the URL names does not exist. */
const NO_SUCH_DATABASE = '3D000'
/** "insufficient privilege": the role may not create databases. */
const NOT_ALLOWED = '42501'

/** An identifier (a database's name) as SQL text. */
export const quoteIdentifier = (identifier: string): string => `"${identifier.replace(/"/g, '""')}"`

/**
 * Creates the database `url` names when the server answers that it does not exist, connecting
 * as the same role to the server's `postgres` database; a role that may not create databases
 * gets one line saying how to. Resolves whether it created it.
 */
export async function createDatabaseIfMissing(url: string): Promise<boolean> {
  const probe = new pg.Client({ connectionString: url })
  try {
    await probe.connect()
    return false
  } catch (error) {
    if ((error as { code?: string }).code !== NO_SUCH_DATABASE) throw error
  } finally {
    await probe.end().catch(() => {})
  }
  const target = new URL(url)
  const name = decodeURIComponent(target.pathname.slice(1))
  const maintenance = new URL(url)
  maintenance.pathname = '/postgres'
  const admin = new pg.Client({ connectionString: maintenance.toString() })
  try {
    await admin.connect()
    await admin.query(`create database ${quoteIdentifier(name)}`)
    return true
  } catch (error) {
    const role = decodeURIComponent(target.username) || 'your role'
    const how =
      (error as { code?: string }).code === NOT_ALLOWED ? `${role} may not create databases` : (error as Error).message
    throw new Error(
      `database "${name}" does not exist on ${target.hostname}:${target.port || 5432} and could not be created (${how}): ` +
        `create it (createdb -h ${target.hostname} -p ${target.port || 5432} -U <a role that may> ${name}, ` +
        `owned by ${role}) and run the command again`,
    )
  } finally {
    await admin.end().catch(() => {})
  }
}
