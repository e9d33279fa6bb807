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
 * Not on embedded PGlite, asked once per connection: it serves every connection in one session,
 * where two connections would prepare one name twice.
 */
export class PreparingClient extends pg.Client {
  /** Whether this connection names statements: not when the server is embedded PGlite. */
  #naming = false

  // biome-ignore lint/suspicious/noExplicitAny: forwards pg's overloads unchanged
  override connect(...args: any[]): any {
    const callback = args[0] as ((error: Error | null, client?: pg.Client) => void) | undefined
    const ready = super.connect().then(async () => {
      // a URL may lead to embedded PGlite too (the stack hands its URL to the services)
      const { rows } = await super.query<{ version: string }>('select version()')
      this.#naming = !String(rows[0]?.version).includes('PGlite')
    })
    if (!callback) return ready
    ready.then(() => callback(null, this), callback)
    return undefined
  }

  // biome-ignore lint/suspicious/noExplicitAny: forwards pg's overloads unchanged
  override query(...args: any[]): any {
    const [first, second, third] = args
    // (text, values[, callback]) as kysely and pg.Pool call it, or (config[, values][, callback])
    const config: pg.QueryConfig | undefined =
      typeof first === 'string'
        ? Array.isArray(second)
          ? { text: first, values: second }
          : undefined
        : first && typeof first.text === 'string' && first.name === undefined && typeof first.submit !== 'function'
          ? { ...first, values: first.values ?? (Array.isArray(second) ? second : undefined) }
          : undefined
    if (!this.#naming || !config?.values?.length) return super.query(...(args as Parameters<pg.Client['query']>))
    const callback = [second, third].find((arg) => typeof arg === 'function') as
      | ((error: Error | null, result?: pg.QueryResult) => void)
      | undefined
    const name = nameOf(config.text)
    if (name === null) return callback ? super.query(config, callback) : super.query(config)
    const named = { ...config, name }
    // a plan made stale by a change of the table: this text goes unnamed from now on
    const stale = (error: unknown) => {
      if (!isStalePlan(error)) return false
      names.set(config.text, null)
      return true
    }
    if (callback) {
      return super.query(named, (error: Error | null, result: pg.QueryResult) =>
        error && stale(error) ? super.query(config, callback) : callback(error, result),
      )
    }
    return super.query(named).catch((error: unknown) => {
      if (!stale(error)) throw error
      return super.query(config)
    })
  }
}
