import { dropSamplePartitionsBefore, prepareSamplePartitions, purgeQuarantine } from '@campus/energy-data/live'
import type pg from 'pg'

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/**
 * Once an hour: the coming month's sample partition made before its first sample, raw samples
 * past INGEST_SAMPLES_RETENTION_DAYS dropped by whole months (their quarter hours stay), the
 * quarantine past INGEST_QUARANTINE_RETENTION_DAYS deleted. Several instances doing it at once
 * change nothing more than one.
 */
export function startHousekeeping(
  pool: pg.Pool,
  config: { INGEST_SAMPLES_RETENTION_DAYS: number; INGEST_QUARANTINE_RETENTION_DAYS: number },
  log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void },
): { stop: () => void } {
  const run = async () => {
    try {
      await prepareSamplePartitions(pool)
      if (config.INGEST_SAMPLES_RETENTION_DAYS > 0) {
        const dropped = await dropSamplePartitionsBefore(
          pool,
          Date.now() - config.INGEST_SAMPLES_RETENTION_DAYS * DAY_MS,
        )
        if (dropped.length > 0) log.info({ partitions: dropped }, 'raw samples past their retention dropped')
      }
      const purged = await purgeQuarantine(pool, Date.now() - config.INGEST_QUARANTINE_RETENTION_DAYS * DAY_MS)
      if (purged > 0) log.info({ messages: purged }, 'quarantined messages past their retention deleted')
    } catch (error) {
      log.warn({ err: error }, 'housekeeping failed; it runs again in an hour')
    }
  }
  const timer = setInterval(() => void run(), HOUR_MS)
  timer.unref()
  void run()
  return { stop: () => clearInterval(timer) }
}
