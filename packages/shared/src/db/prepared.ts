import { hash } from 'node:crypto'
import pg from 'pg'

/**
 * Statements named so far, by text. Bounded: pg keeps each name per connection and PostgreSQL a
 * plan per name and connection, so a text made up afresh per call (a list of n placeholders) must
 * not grow them without end; beyond the bound, statements go unnamed as before.
 */
const names = new Map<string, string | null>()
const MAX_NAMED = 2000

/** PostgreSQL's answer to a prepared statement whose result columns changed under it (a migration added one). */
const isStalePlan = (error: unknown): boolean =>
  (error as { code?: string }).code === '0A000' &&
  String((error as { message?: string }).message).includes('cached plan must not change result type')

function nameOf(text: string): string | null {
  let name = names.get(text)
  if (name === undefined) {
    name = names.size < MAX_NAMED ? `s${hash('sha1', text, 'hex').slice(0, 20)}` : null
    names.set(text, name)
  }
  return name
}

/**
 * A pg client that names every statement with parameters after a digest of its text, so
 * PostgreSQL parses and plans it once per connection rather than on every call (kysely sends
 * each query unnamed). For a code exchange that was half of the database's work. A statement
 * without parameters (DDL, LISTEN, a migration of several statements) goes as before.
 *
 * Only for a PostgreSQL server: embedded PGlite serves every connection in one session, where
 * two connections would prepare one name twice.
 */
export class PreparingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: forwards pg's overloads unchanged
  override query(...args: any[]): any {
    const [text, values, callback] = args
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || callback !== undefined) {
      return super.query(...(args as Parameters<pg.Client['query']>))
    }
    const name = nameOf(text)
    if (name === null) return super.query(text, values)
    return super.query({ name, text, values }).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error
      // this connection's plan predates a change of the table; the text goes unnamed from now on
      names.set(text, null)
      return super.query(text, values)
    })
  }
}
