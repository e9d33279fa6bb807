/**
 * Answers of `/data` for windows wholly in the past, kept after the key check has passed (the
 * body, never the decision): a past quarter hour changes only when data is written for it (a seed,
 * an import, a live sample late or on time), and every write says so on `MEASUREMENTS_CHANNEL` in
 * its own transaction.
 * Each instance listens (LISTEN/NOTIFY, `listenForChanges` of shared) and drops the answers
 * whose window and table a change touches; before trusting a hit it makes sure it has heard
 * every change committed so far (one round trip on the listening connection, shared by the
 * requests that wait at the same time), so an import is visible at once on every instance.
 * Bounded in bytes (`ENERGY_CACHE_MB`) by lru-cache; nothing is cached while not listening.
 */
import { randomUUID } from 'node:crypto'
import { type ChangeListener, type ListeningPool, listenForChanges } from '@campus/shared'
import { LRUCache } from 'lru-cache'
import { decodeMeasurementsChange, MEASUREMENTS_CHANNEL } from '../repositories/measurement-changes.ts'

/** One cached answer: its body and the stored rows it was read from (table, [lo, hi) in epoch ms). */
export interface CachedAnswer {
  contentType: string
  body: Buffer
  table: string
  lo: number
  hi: number
}

export interface WindowCache {
  /**
   * The cached answer of `key`, when there is one no change has ended. `generation` is taken
   * before reading, so that `set` can tell whether a change arrived meanwhile.
   */
  get(key: string): Promise<CachedAnswer | undefined>
  /** Counts the changes heard: an answer read across a change is not kept. */
  readonly generation: number
  /** Keeps `answer` unless a change was heard since `generation` or caching is off. */
  set(key: string, answer: CachedAnswer, generation: number): void
  /** Bytes held now (the sum of the bodies). */
  readonly bytes: number
  /** Settles once the cache knows whether it may keep answers (listening and probed, or not). */
  readonly settled: Promise<void>
  close(): Promise<void>
}

export interface WindowCacheOptions {
  /** Most bytes of bodies held; 0 turns the cache off. */
  maxBytes: number
  /** Where to listen for changes; without it (embedded database) nothing is cached. */
  pool?: ListeningPool | undefined
  /** The listening connection went away: caching is off until it is back. */
  lost?: (error: unknown) => void
  /**
   * Sends a notification on the channel (another connection than the listening one's): caching
   * starts only once a probe sent so comes back, proof that changes reach this instance (a server
   * that takes LISTEN but never delivers, as the embedded database's socket, gets no cache).
   */
  notify?: (payload: string) => Promise<void>
  /** The probe did not come back in time: caching stays off. */
  deaf?: () => void
  /**
   * Answers are read from standbys: a change heard on the primary may not be replayed there yet,
   * so an answer read meanwhile would keep the old rows. A change is over for the cache once every
   * standby has replayed the primary's WAL as it stood when the change was heard (the notification
   * comes after the commit); until then nothing is kept, and then the touched answers are dropped again.
   */
  replicas?: { primaryLsn(): Promise<bigint>; replayed(lsn: bigint): Promise<boolean> } | undefined
}

/** How often the standbys' replay is asked while a change waits for it. */
const REPLAY_POLL_MS = 20

/** How long the probe may take to come back before the channel is judged deaf. */
const PROBE_MS = 2000
const PROBE_PREFIX = 'probe:'

export function createWindowCache(options: WindowCacheOptions): WindowCache {
  let generation = 0
  let listening = false
  if (options.maxBytes <= 0 || !options.pool) {
    return {
      get: async () => undefined,
      generation,
      set: () => {},
      bytes: 0,
      settled: Promise.resolve(),
      close: async () => {},
    }
  }
  const answers = new LRUCache<string, CachedAnswer>({
    maxSize: options.maxBytes,
    // an answer larger than the whole cache is not kept at all
    maxEntrySize: options.maxBytes,
    sizeCalculation: (answer) => Math.max(1, answer.body.length),
  })
  const drop = (touched: (answer: CachedAnswer) => boolean) => {
    for (const [key, answer] of answers.entries()) if (touched(answer)) answers.delete(key)
  }
  // changes heard and not yet replayed by every standby: nothing is kept while there are any
  let unreplayed = 0
  let closed = false
  const retry = async <T>(ask: () => Promise<T>): Promise<T | undefined> => {
    for (;;) {
      if (closed) return undefined
      try {
        return await ask()
      } catch {
        await new Promise((r) => setTimeout(r, REPLAY_POLL_MS * 10))
      }
    }
  }
  const afterReplay = async (touched: (answer: CachedAnswer) => boolean) => {
    const replicas = options.replicas
    if (!replicas) return
    unreplayed++
    // a primary or standby that does not answer is asked again: the cache keeps nothing meanwhile
    const lsn = await retry(() => replicas.primaryLsn())
    while (!closed && lsn !== undefined && !(await retry(() => replicas.replayed(lsn)))) {
      await new Promise((r) => setTimeout(r, REPLAY_POLL_MS))
    }
    unreplayed--
    generation++
    drop(touched)
  }
  let probe: string | undefined
  let probeTimer: NodeJS.Timeout | undefined
  let settle: () => void = () => undefined
  const settled = new Promise<void>((resolve) => {
    settle = resolve
    // never holds a start: a channel that neither answers nor fails is judged after this long
    setTimeout(resolve, PROBE_MS * 2).unref()
  })
  const listener: ChangeListener = listenForChanges(options.pool, MEASUREMENTS_CHANNEL, {
    changed: (payload) => {
      if (payload.startsWith(PROBE_PREFIX)) {
        // another instance's probe says nothing of the data; this one's opens the cache
        if (payload === probe) {
          probe = undefined
          clearTimeout(probeTimer)
          listening = true
          settle()
        }
        return
      }
      generation++
      const change = decodeMeasurementsChange(payload)
      if (!change) {
        answers.clear()
        void afterReplay(() => true)
        return
      }
      const tables = new Set(change.tables)
      const touched = (a: CachedAnswer) => tables.has(a.table) && a.lo < change.toMs && change.fromMs < a.hi
      drop(touched)
      void afterReplay(touched)
    },
    listening: () => {
      generation++
      answers.clear()
      if (!options.notify) {
        listening = true
        settle()
        return
      }
      const sent = `${PROBE_PREFIX}${randomUUID()}`
      probe = sent
      clearTimeout(probeTimer)
      probeTimer = setTimeout(() => {
        if (probe === sent) options.deaf?.()
        settle()
      }, PROBE_MS)
      probeTimer.unref()
      options.notify(sent).catch(() => undefined)
    },
    lost: (error) => {
      generation++
      listening = false
      probe = undefined
      answers.clear()
      options.lost?.(error)
      settle()
    },
  })
  return {
    async get(key) {
      if (!listening || !answers.has(key)) return undefined
      // a change committed elsewhere just before this request must not be missed
      await listener.sync()
      return listening ? answers.get(key) : undefined
    },
    get generation() {
      return generation
    },
    set(key, answer, since) {
      if (listening && since === generation && unreplayed === 0) answers.set(key, answer)
    },
    get bytes() {
      return answers.calculatedSize
    },
    settled,
    async close() {
      listening = false
      closed = true
      clearTimeout(probeTimer)
      answers.clear()
      await listener.close()
    },
  }
}
