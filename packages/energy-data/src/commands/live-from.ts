import { commandFailed, usageError } from '@campus/shared'
import type pg from 'pg'
import { parseInstant } from '../domain/time.ts'

/**
 * `meter:live-from --meter ID (--from DATETIME | --clear)`: where a meter's live samples may start.
 * A seed or an import moves it past the quarter hours it writes, so that a late sample never
 * rewrites them; set it back to let live samples into that past (then replay the quarantine).
 */
export async function setLiveFrom(
  pool: pg.Pool,
  input: { meter?: string | undefined; from?: string | undefined; clear?: boolean | undefined },
) {
  const meter = Number(input.meter)
  if (!Number.isSafeInteger(meter)) throw usageError('--meter is a meter id')
  if ((input.from === undefined) === (input.clear !== true)) throw usageError('give --from DATETIME or --clear')
  const fromMs = input.from === undefined ? undefined : parseInstant(input.from)
  if (input.from !== undefined && fromMs === undefined) throw usageError('--from is a date or an ISO 8601 datetime')
  const { rows } = await pool.query<{ live_from: Date | null }>(
    'update meters set live_from = $2 where id = $1 returning live_from',
    [meter, fromMs === undefined ? null : new Date(fromMs)],
  )
  if (rows.length === 0) throw commandFailed(`no meter ${meter}`)
  return { meter, live_from: rows[0]?.live_from?.toISOString() ?? null }
}
