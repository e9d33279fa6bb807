import { basename } from 'node:path'
import type pg from 'pg'
import type { Commodity } from '../catalogue/quantities.ts'
import type { Band, DaySet, HourlyValue, RateVersion } from '../domain/rates.ts'
import { HOUR_MS } from '../domain/time.ts'

/** Tariff and emission versions (migration 0013): written by their imports, read by every priced answer. */
export type RateKind = 'tariff' | 'emission'

export interface NewVersion {
  kind: RateKind
  path: string
  zone: string
  currency?: string | undefined
  bands: readonly Band[]
  hours: readonly HourlyValue[]
}

/** Stores one version, whole; its id. */
export async function insertRateVersion(client: pg.PoolClient, version: NewVersion): Promise<number> {
  const { rows } = await client.query<{ id: number }>(
    'insert into rate_versions (kind, file, zone, currency) values ($1, $2, $3, $4) returning id',
    [version.kind, basename(version.path), version.zone, version.currency ?? null],
  )
  const id = (rows[0] as { id: number }).id
  const { bands, hours } = version
  if (bands.length > 0) {
    await client.query(
      `insert into rate_bands (version_id, commodity, valid_from, valid_to, days, from_minute, to_minute, value)
       select $1, * from unnest($2::text[], $3::date[], $4::date[], $5::text[], $6::int[], $7::int[], $8::float8[])`,
      [
        id,
        bands.map((b) => b.commodity),
        bands.map((b) => b.validFrom),
        bands.map((b) => b.validTo),
        bands.map((b) => b.days),
        bands.map((b) => b.fromMinute),
        bands.map((b) => b.toMinute),
        bands.map((b) => b.value),
      ],
    )
  }
  if (hours.length > 0) {
    await client.query(
      `insert into rate_hours (version_id, commodity, start, value)
       select $1, c, to_timestamp(ms / 1000), v from unnest($2::text[], $3::float8[], $4::float8[]) as u(c, ms, v)`,
      [id, hours.map((h) => h.commodity), hours.map((h) => h.start), hours.map((h) => h.value)],
    )
  }
  return id
}

/** The currencies the tariffs imported so far are in. */
export async function tariffCurrencies(client: pg.PoolClient | pg.Pool): Promise<string[]> {
  const { rows } = await client.query<{ currency: string }>(
    "select distinct currency from rate_versions where kind = 'tariff' order by currency",
  )
  return rows.map((r) => r.currency)
}

export interface RateVersionSummary {
  id: number
  kind: RateKind
  file: string
  zone: string
  currency: string | null
  imported_at: Date
}

/** Every version of `kind`, newest first, with what it says of `[fromMs, toMs)` (hourly values only within it). */
export async function loadRateVersions(
  pool: pg.Pool,
  kind: RateKind,
  fromMs: number,
  toMs: number,
): Promise<{ versions: RateVersion[]; currency: string | null }> {
  const { rows: heads } = await pool.query<RateVersionSummary>(
    'select id, kind, file, zone, currency, imported_at from rate_versions where kind = $1 order by id desc',
    [kind],
  )
  if (heads.length === 0) return { versions: [], currency: null }
  const ids = heads.map((h) => h.id)
  const [bands, hours] = await Promise.all([
    pool.query<{
      version_id: number
      commodity: Commodity
      valid_from: string
      valid_to: string
      days: DaySet
      from_minute: number
      to_minute: number
      value: number
    }>(
      `select version_id, commodity, to_char(valid_from, 'YYYY-MM-DD') as valid_from, to_char(valid_to, 'YYYY-MM-DD') as valid_to,
         days, from_minute, to_minute, value
       from rate_bands where version_id = any($1::int[])`,
      [ids],
    ),
    pool.query<{ version_id: number; commodity: Commodity; start: number; value: number }>(
      `select version_id, commodity, (extract(epoch from start) * 1000)::float8 as start, value from rate_hours
       where version_id = any($1::int[]) and start > $2 and start < $3 order by start`,
      [ids, new Date(fromMs - HOUR_MS), new Date(toMs)],
    ),
  ])
  const versions = heads.map(
    (h): RateVersion => ({
      id: h.id,
      zone: h.zone,
      bands: bands.rows
        .filter((b) => b.version_id === h.id)
        .map((b) => ({
          commodity: b.commodity,
          validFrom: b.valid_from,
          validTo: b.valid_to,
          days: b.days,
          fromMinute: b.from_minute,
          toMinute: b.to_minute,
          value: b.value,
        })),
      hours: hours.rows.filter((r) => r.version_id === h.id),
    }),
  )
  return { versions, currency: heads[0]?.currency ?? null }
}

/** Every version of `kind`, newest first. */
export async function listRateVersions(pool: pg.Pool, kind: RateKind): Promise<RateVersionSummary[]> {
  const { rows } = await pool.query<RateVersionSummary>(
    'select id, kind, file, zone, currency, imported_at from rate_versions where kind = $1 order by id desc',
    [kind],
  )
  return rows
}
