import { createHash } from 'node:crypto'
import type pg from 'pg'
import type { LiveMessage, Refused } from '../domain/intake.ts'

/**
 * What cannot be taken is kept (docs/LIVE.md, "The quarantine"): a refused message once, as the
 * bytes that came (a NUL byte included: bytea), and a row per refusal referring to it. A message
 * larger than the ingest's cap is kept by its first bytes only. A redelivered message finds its
 * payload and its refusals kept already.
 */

/** Of a message refused for its size, the bytes kept: enough to see what it was. */
export const TOO_LARGE_HEAD_BYTES = 4096

/** A source as text may hold (a topic is sent by the client). */
const cleanSource = (source: string): string => source.replaceAll('\u0000', '\uFFFD').slice(0, 300)

/** The refusals of each message, kept with its payload; the number of refusal rows new. */
export async function quarantineRefusals(
  client: pg.PoolClient,
  refusals: ReadonlyArray<{ message: LiveMessage; refused: readonly Refused[] }>,
): Promise<number> {
  const kept = refusals.filter((r) => r.refused.length > 0)
  if (kept.length === 0) return 0
  const payloads = kept.map(({ message, refused }) => {
    const tooLarge = refused.some((r) => r.code === 'too_large')
    return {
      receivedAt: new Date(message.receivedMs),
      source: cleanSource(message.source),
      datalogger: message.datalogger ?? null,
      digest: createHash('sha256').update(message.payload).digest(),
      size: message.size ?? message.payload.length,
      payload: tooLarge ? message.payload.subarray(0, TOO_LARGE_HEAD_BYTES) : message.payload,
    }
  })
  await client.query(
    `insert into quarantine_payloads (received_at, source, datalogger, digest, size, payload)
     select * from unnest($1::timestamptz[], $2::text[], $3::text[], $4::bytea[], $5::int[], $6::bytea[])
     on conflict (digest, source) do nothing`,
    [
      payloads.map((p) => p.receivedAt),
      payloads.map((p) => p.source),
      payloads.map((p) => p.datalogger && cleanSource(p.datalogger)),
      payloads.map((p) => p.digest),
      payloads.map((p) => p.size),
      payloads.map((p) => p.payload),
    ],
  )
  const ids = await client.query<{ id: string; digest: Buffer; source: string }>(
    `select id, digest, source from quarantine_payloads
     where (digest, source) in (select * from unnest($1::bytea[], $2::text[]))`,
    [payloads.map((p) => p.digest), payloads.map((p) => p.source)],
  )
  const idOf = new Map(ids.rows.map((r) => [`${r.digest.toString('hex')}|${r.source}`, r.id]))
  const rows = kept.flatMap(({ message, refused }, i) => {
    const p = payloads[i] as (typeof payloads)[number]
    const id = idOf.get(`${p.digest.toString('hex')}|${p.source}`) as string
    return refused.map((r) => ({ id, receivedAt: new Date(message.receivedMs), ...r }))
  })
  const { rowCount } = await client.query(
    `insert into quarantine (payload_id, received_at, code, reason, record_index)
     select * from unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::int[])
     on conflict (payload_id, (coalesce(record_index, -1))) where replayed_at is null do nothing`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.receivedAt),
      rows.map((r) => r.code),
      rows.map((r) => r.reason),
      rows.map((r) => r.recordIndex),
    ],
  )
  return rowCount ?? 0
}
