import type pg from 'pg'
import { GROUP_COLUMNS, GROUP_NAMES, MIRRORS, seriesNamed } from '../catalogue/groups.ts'
import { AMOUNT_METER_IDS, METERS, meterMetadata } from '../catalogue/meters.ts'
import { DAY_MS, floorQuarter, QUARTER_MS } from '../domain/time.ts'
import { emptyMeterQuarters, writeQuarters } from '../repositories/quarter-writes.ts'
import { inTransaction } from '../repositories/transaction.ts'
import { environmentAt, noise } from './environment.ts'
import { DATALOGGERS, GROUP_STREAMS, meterSignal, signalsAt } from './estate.ts'

interface SeedOptions {
  /** First quarter hour (epoch ms, rounded down to a quarter hour). */
  fromMs: number
  /** End of the range (exclusive). */
  toMs: number
  seed: number
  /** Days generated and written per statement batch. */
  chunkDays?: number
  /**
   * Commit after the metadata and after every chunk instead of once at the end, so other
   * clients get turns meanwhile (the embedded database runs one transaction at a time).
   */
  commitEachChunk?: boolean
  /** Recorded in `seed_runs`; completed when the last row is in. */
  purpose?: 'seed' | 'demo'
  /** Called after each chunk with the oldest instant written so far (chunks go newest first). */
  onProgress?: (doneBackToMs: number) => void
}

interface SeedSummary {
  from: string
  to: string
  seed: number
  dataloggers: number
  meters: number
  rows: Record<string, number>
  seconds: number
}

const BLOCK = 2880 // quarter hours in 30 days: each series may lose one stretch per block

/** Whether a series has no reading at quarter `q`: a few outages of 1 to 11 hours a year. */
function inGap(seed: number, stream: number, q: number): boolean {
  const block = Math.floor(q / BLOCK)
  if (noise(seed, 5000 + stream, block) >= 0.3) return false
  const start = Math.floor(noise(seed, 6000 + stream, block) * BLOCK)
  const length = 4 + Math.floor(noise(seed, 7000 + stream, block) * 40)
  const offset = q - block * BLOCK
  return offset >= start && offset < start + length
}

const round3 = (x: number) => Math.round(x * 1000) / 1000

async function insertMetadata(client: pg.PoolClient): Promise<void> {
  for (const d of DATALOGGERS) {
    await client.query(
      `insert into dataloggers (id, description, notes, serial, date_from, date_to, ip)
       values ($1, $2, $3, $4, $5, $6, $7)
       on conflict (id) do update set description = excluded.description, notes = excluded.notes,
         serial = excluded.serial, date_from = excluded.date_from, date_to = excluded.date_to, ip = excluded.ip`,
      [d.id, d.description, d.notes, d.serial, d.date_from, d.date_to, d.ip],
    )
  }
  for (const m of METERS) {
    const { type_id, unit_id, quantity_id } = meterMetadata(m)
    await client.query(
      `insert into meters (id, description, notes, date_from, date_to, datalogger_id, type_id, unit_id, quantity_id)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       on conflict (id) do update set description = excluded.description, notes = excluded.notes,
         date_from = excluded.date_from, date_to = excluded.date_to, datalogger_id = excluded.datalogger_id,
         type_id = excluded.type_id, unit_id = excluded.unit_id, quantity_id = excluded.quantity_id`,
      [
        m.id,
        `${m.id}) ${m.text}`,
        'notes' in m ? m.notes : null,
        m.dateFrom,
        null,
        m.datalogger,
        type_id,
        unit_id,
        quantity_id,
      ],
    )
  }
}

/**
 * Records a demo run to come and writes the estate's metadata, in one transaction: the demo's keys
 * are shown before its data is seeded, and the dataloggers may send at once (their meters exist).
 * The demo finishes the run as it would an interrupted one.
 */
export async function registerDemoRun(
  pool: pg.Pool,
  run: { fromMs: number; toMs: number; seed: number },
): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(
      `insert into seed_runs (seed, from_time, to_time, purpose) values ($1, to_timestamp($2), to_timestamp($3), 'demo')`,
      [run.seed, floorQuarter(run.fromMs) / 1000, floorQuarter(run.toMs) / 1000],
    )
    await insertMetadata(client)
  })
}

/**
 * Fills the estate's metadata and every series over the whole quarter hours of [fromMs, toMs) in
 * one transaction (or one per chunk), a few days per statement (multi-row inserts from arrays
 * through `unnest`). Rows already present are kept, so seeding twice is harmless. Live samples of
 * the meters seeded start where the seed ends (`meters.live_from`): the quarter hour under way is
 * left to them.
 */
export async function seedEstate(pool: pg.Pool, options: SeedOptions): Promise<SeedSummary> {
  const started = Date.now()
  const seed = options.seed >>> 0
  const fromMs = floorQuarter(options.fromMs)
  const toMs = floorQuarter(options.toMs)
  const chunkMs = (options.chunkDays ?? 7) * DAY_MS
  const rows: Record<string, number> = { data_15m: 0 }
  for (const g of GROUP_NAMES) rows[`${g}_15m`] = 0

  const meterSince = METERS.map((m) => Date.parse(m.dateFrom))
  const meterSignals = METERS.map(meterSignal)
  const amounts = METERS.map((m) => AMOUNT_METER_IDS.includes(m.id))
  const mirroredBy = METERS.map((m) =>
    GROUP_NAMES.filter((g) => MIRRORS.some((s) => s.group === g && s.meter?.id === m.id)),
  )
  const mirrorOf = new Map(GROUP_NAMES.map((g) => [g, GROUP_COLUMNS[g].map((c) => seriesNamed(g, c).meter?.id)]))

  const client = await pool.connect()
  try {
    await client.query('begin')
    const run = await client.query<{ id: number }>(
      `insert into seed_runs (seed, from_time, to_time, purpose) values ($1, to_timestamp($2), to_timestamp($3), $4)
       returning id`,
      [seed, fromMs / 1000, toMs / 1000, options.purpose ?? 'seed'],
    )
    await insertMetadata(client)
    const checkpoint = async () => {
      if (!options.commitEachChunk) return
      await client.query('commit')
      await client.query('begin')
    }
    await checkpoint()
    // newest first: the latest days answer while older ones are still being written
    for (let chunkEnd = toMs; chunkEnd > fromMs; ) {
      const chunkStart = Math.max(fromMs, floorQuarter(chunkEnd - chunkMs))
      const meter = emptyMeterQuarters()
      const wide = new Map(
        GROUP_NAMES.map((g) => [
          g,
          { t: [] as number[], columns: GROUP_COLUMNS[g].map(() => [] as Array<number | null>) },
        ]),
      )

      for (let t = chunkStart; t < chunkEnd; t += QUARTER_MS) {
        const q = t / QUARTER_MS
        const signals = signalsAt(seed, q, environmentAt(seed, t))
        const day = Math.floor(q / 96)
        METERS.forEach((m, k) => {
          if (t < meterSince[k]!) return
          // a meter mirrored in a group table is read by that table's logger: its outages are the meter's too
          if (mirroredBy[k]!.some((g) => inGap(seed, GROUP_STREAMS[g], q))) return
          const stream = 100 + k
          let label = 'ok'
          const { signal, factor } = meterSignals[k]!
          let value = (signals[signal] ?? 0) * factor
          let samples = 15
          if (inGap(seed, stream, q)) {
            // most outages leave a hole; some were filled in afterwards by interpolation
            if (noise(seed, 7500 + stream, Math.floor(q / BLOCK)) >= 0.25) return
            label = 'interpolated'
            samples = 0
          } else {
            const estimatedFrom = Math.floor(noise(seed, 9100 + stream, day) * 88)
            const quarterOfDay = q - day * 96
            if (
              noise(seed, 9000 + stream, day) < 0.02 &&
              quarterOfDay >= estimatedFrom &&
              quarterOfDay < estimatedFrom + 8
            ) {
              label = 'estimated'
            } else if (noise(seed, 9200 + stream, q) < 0.0012) {
              label = 'suspect'
              value *= 2.7
            }
            const missing = noise(seed, 9300 + stream, q)
            if (missing < 0.02) samples = 13 + Math.floor(missing * 100)
          }
          const spread = samples === 0 ? 0 : Math.abs(value) * (0.02 + 0.06 * noise(seed, 9400 + stream, q))
          const quarterValue = round3(value)
          meter.t.push(t)
          meter.meterId.push(m.id)
          if (amounts[k]) {
            // an amount: the quarter hour's total is the sum of its samples, increments of a fair share each
            const per = (x: number) => (samples === 0 ? null : x / samples)
            meter.avg.push(per(quarterValue))
            meter.min.push(per(round3(value - spread * 0.8)))
            meter.max.push(per(round3(value + spread)))
            meter.sum.push(quarterValue)
          } else {
            meter.avg.push(quarterValue)
            meter.min.push(round3(value - spread * 0.8))
            meter.max.push(round3(value + spread))
            meter.sum.push(samples === 0 ? null : round3(quarterValue * samples))
          }
          meter.count.push(samples)
          meter.tag.push(label)
        })
        for (const g of GROUP_NAMES) {
          const stream = GROUP_STREAMS[g]
          if (inGap(seed, stream, q)) continue
          const target = wide.get(g)!
          target.t.push(t)
          GROUP_COLUMNS[g].forEach((c, i) => {
            // a column mirroring a meter is written from the meter's rows (the one write path's mirror rule)
            if (mirrorOf.get(g)![i] !== undefined) {
              target.columns[i]!.push(null)
              return
            }
            // a single reading lost now and then
            const lost = noise(seed, 8000 + stream * 64 + i, q) < 0.0008
            target.columns[i]!.push(lost ? null : round3(signals[c] ?? 0))
          })
        }
      }

      // the one write path: rows, the columns mirroring the meters, rollups and change notice, when this commits
      await writeQuarters(client, {
        meters: meter,
        groups: [...wide].map(([group, target]) => ({
          group,
          columns: GROUP_COLUMNS[group],
          t: target.t,
          values: target.columns,
        })),
        existing: 'keep',
        endsLive: true,
      })
      rows.data_15m = (rows.data_15m ?? 0) + meter.t.length
      for (const [g, target] of wide) rows[`${g}_15m`] = (rows[`${g}_15m`] ?? 0) + target.t.length
      await checkpoint()
      options.onProgress?.(chunkStart)
      chunkEnd = chunkStart
    }
    await client.query('update seed_runs set completed_at = now() where id = $1', [run.rows[0]?.id])
    await client.query('commit')
  } catch (error) {
    await client.query('rollback').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
  return {
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    seed,
    dataloggers: DATALOGGERS.length,
    meters: METERS.length,
    rows,
    seconds: Math.round((Date.now() - started) / 100) / 10,
  }
}
