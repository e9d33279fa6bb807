/**
 * Reads from PostgreSQL streaming standbys (ENERGY_READ_DATABASE_URL, one or more): the /data
 * answers are read there, round robin; the key bookkeeping, LISTEN and everything else stay on the
 * primary. A standby's lag is measured against the primary's WAL: every half second the primary's
 * current WAL position is noted with the time, and a standby's lag is how long ago the primary had
 * first written what the standby has not replayed yet (0 when it has replayed all the primary had
 * written at the last note; an idle primary makes no lag). A standby further behind than
 * ENERGY_MAX_REPLICA_LAG_SECONDS, or not answering, makes the instance not ready.
 */
import pg from 'pg'

export interface Replicas {
  /** The pool of the next standby to read from. */
  pick(): pg.Pool
  /** Each standby's lag, seconds (undefined while not measured or not answering), by its address. */
  lags(): Map<string, number | undefined>
  /** "ok", or which standby lags or does not answer. */
  readiness(): string
  /** The primary's WAL position now. */
  primaryLsn(): Promise<bigint>
  /** Whether every standby has replayed the primary's WAL up to `lsn`. */
  replayed(lsn: bigint): Promise<boolean>
  close(): Promise<void>
}

/** An LSN ("16/B374D848") as a number. */
export const lsnOf = (text: string): bigint => {
  const [hi = '0', lo = '0'] = text.split('/')
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`)
}

const NOTE_MS = 500
/** How long the primary's notes are kept: a lag beyond reads as at least this. */
const KEEP_MS = 120_000

const addressOf = (url: string): string => {
  const u = new URL(url)
  return `${u.hostname}:${u.port || 5432}${u.pathname}`
}

export function openReplicas(primary: pg.Pool, urls: string[], maxLagSeconds: number): Replicas {
  const standbys = urls.map((url) => {
    const pool = new pg.Pool({ connectionString: url, max: 10, application_name: 'energy-data reads' })
    // a standby gone while idle is a lag (readiness says so), never a crash
    pool.on('error', () => {})
    return { address: addressOf(url), pool, lag: undefined as number | undefined }
  })
  const notes: Array<{ at: number; lsn: bigint }> = []
  let next = 0
  let closed = false

  const replayLsn = async (pool: pg.Pool): Promise<bigint> => {
    const { rows } = await pool.query<{ lsn: string | null }>('select pg_last_wal_replay_lsn()::text as lsn')
    // null: not a standby (a primary named as a replica replays nothing and lags nothing)
    return rows[0]?.lsn ? lsnOf(rows[0].lsn) : BigInt(Number.MAX_SAFE_INTEGER) ** 2n
  }
  const primaryLsn = async (): Promise<bigint> => {
    const { rows } = await primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')
    return lsnOf(rows[0]?.lsn ?? '0/0')
  }

  const measure = async () => {
    const now = Date.now()
    try {
      notes.push({ at: now, lsn: await primaryLsn() })
    } catch {
      // the primary away: the lags keep their last measure
    }
    while (notes.length > 1 && (notes[0]?.at ?? now) < now - KEEP_MS) notes.shift()
    await Promise.all(
      standbys.map(async (s) => {
        try {
          const replayed = await replayLsn(s.pool)
          const behind = notes.find((n) => n.lsn > replayed)
          s.lag = behind ? (Date.now() - behind.at) / 1000 : 0
        } catch {
          s.lag = undefined
        }
      }),
    )
  }
  let timer: NodeJS.Timeout | undefined
  const loop = () => {
    if (closed) return
    void measure().finally(() => {
      if (!closed) timer = setTimeout(loop, NOTE_MS)
    })
  }
  loop()

  return {
    pick() {
      // a standby within the bound if any, in turn; else the next one anyway (readiness says why)
      for (let tried = 0; tried < standbys.length; tried++) {
        const s = standbys[(next + tried) % standbys.length]
        if (s && s.lag !== undefined && s.lag <= maxLagSeconds) {
          next = (next + tried + 1) % standbys.length
          return s.pool
        }
      }
      const s = standbys[next % standbys.length]
      next = (next + 1) % standbys.length
      return (s ?? standbys[0])?.pool as pg.Pool
    },
    lags: () => new Map(standbys.map((s) => [s.address, s.lag])),
    readiness() {
      const wrong = standbys
        .filter((s) => s.lag === undefined || s.lag > maxLagSeconds)
        .map((s) =>
          s.lag === undefined
            ? `standby ${s.address} does not answer`
            : `standby ${s.address} lags ${s.lag.toFixed(1)} s (more than ENERGY_MAX_REPLICA_LAG_SECONDS=${maxLagSeconds})`,
        )
      return wrong.length === 0 ? 'ok' : wrong.join('; ')
    },
    primaryLsn,
    async replayed(lsn) {
      const replayedBy = await Promise.all(standbys.map((s) => replayLsn(s.pool).catch(() => 0n)))
      return replayedBy.every((r) => r >= lsn)
    },
    async close() {
      closed = true
      clearTimeout(timer)
      await Promise.all(standbys.map((s) => s.pool.end()))
    },
  }
}
