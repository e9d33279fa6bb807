import { serviceCounter, serviceGauge } from '@campus/shared'

/** What /metrics tells of the stream, beside the platform's request metrics. */
export function ingestMetrics(held: () => number, heldBytes: () => number) {
  return {
    samples: serviceCounter('ingest_samples_total', 'Samples stored (each meter and instant once)', []),
    duplicates: serviceCounter(
      'ingest_duplicates_total',
      'Samples received again (redelivered or replayed: same meter and instant), counted once',
      [],
    ),
    quarantined: serviceCounter('ingest_quarantined_total', 'Records or payloads put in the quarantine, by reason', [
      'code',
    ]),
    messages: serviceCounter('ingest_messages_total', 'SenML packs received, by transport', ['transport']),
    writeFailures: serviceCounter(
      'ingest_write_failures_total',
      'Batches the database could not take (held unacknowledged, written again)',
      [],
    ),
    dropped: serviceCounter(
      'ingest_dropped_total',
      'Messages that could be neither written nor quarantined (logged), let go so the stream goes on',
      [],
    ),
    held: serviceGauge('ingest_held_messages', 'Messages received and not yet committed', held),
    heldBytes: serviceGauge(
      'ingest_held_bytes',
      'Bytes of packs (MQTT and HTTP) taken and not yet committed; bounded by INGEST_IN_FLIGHT_MB',
      heldBytes,
    ),
  }
}

export type IngestMetrics = ReturnType<typeof ingestMetrics>
