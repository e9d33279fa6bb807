import { commandFailed } from '@campus/shared'
import type pg from 'pg'
import type { Band, HourlyValue } from '../domain/rates.ts'
import { HOUR_MS, localMidnight } from '../domain/time.ts'
import { readEmissionFile, readTariffFile } from '../import/rates-csv.ts'
import { notifyMeasurementsChanged } from '../repositories/measurement-changes.ts'
import { insertRateVersion, listRateVersions, type RateKind, tariffCurrencies } from '../repositories/rates.ts'
import { inTransaction } from '../repositories/transaction.ts'

/**
 * `tariffs:import FILE`, `emissions:import FILE`: one version each, taken whole or refused with the
 * lines at fault named (`import/rates-csv.ts`); `tariffs:list`, `emissions:list`. Local dates and
 * times are those of the estate's zone (ENERGY_TIMEZONE), kept with the version.
 */

/** The instants a version's bands and hours span, per commodity. */
function spans(zone: string, bands: readonly Band[], hours: readonly HourlyValue[]) {
  const out: Record<string, { from: number; to: number }> = {}
  const widen = (commodity: string, from: number, to: number) => {
    const span = out[commodity]
    out[commodity] = span ? { from: Math.min(span.from, from), to: Math.max(span.to, to) } : { from, to }
  }
  for (const b of bands) widen(b.commodity, localMidnight(b.validFrom, zone), localMidnight(b.validTo, zone))
  for (const h of hours) widen(h.commodity, h.start, h.start + HOUR_MS)
  return out
}

async function importVersion(
  pool: pg.Pool,
  kind: RateKind,
  path: string,
  zone: string,
  file: { bands: Band[]; hours: HourlyValue[]; currency?: string },
) {
  return inTransaction(pool, async (client) => {
    if (file.currency !== undefined) {
      const known = (await tariffCurrencies(client)).filter((c) => c !== file.currency)
      if (known.length > 0) {
        throw commandFailed(
          `nothing imported: the tariffs so far are in ${known.join(', ')}, this file in ${file.currency}: one currency, so costs add up`,
        )
      }
    }
    const version = await insertRateVersion(client, { kind, path, zone, currency: file.currency, ...file })
    const covered = spans(zone, file.bands, file.hours)
    const all = Object.values(covered)
    // priced answers of these windows were cached: every instance drops them when this commits
    await notifyMeasurementsChanged(client, {
      tables: ['data_15m'],
      fromMs: Math.min(...all.map((s) => s.from)),
      toMs: Math.max(...all.map((s) => s.to)),
    })
    return {
      version,
      kind,
      zone,
      ...(file.currency === undefined ? {} : { currency: file.currency }),
      rows: file.bands.length + file.hours.length,
      spans: Object.fromEntries(
        Object.entries(covered).map(([c, s]) => [
          c,
          { from: new Date(s.from).toISOString(), to: new Date(s.to).toISOString() },
        ]),
      ),
    }
  })
}

export async function tariffsImport(pool: pg.Pool, path: string, zone: string) {
  return importVersion(pool, 'tariff', path, zone, await readTariffFile(path))
}

export async function emissionsImport(pool: pg.Pool, path: string, zone: string) {
  return importVersion(pool, 'emission', path, zone, await readEmissionFile(path))
}

export async function ratesList(pool: pg.Pool, kind: RateKind) {
  const versions = await listRateVersions(pool, kind)
  return {
    versions: versions.map((v) => ({
      version: v.id,
      file: v.file,
      zone: v.zone,
      ...(kind === 'tariff' ? { currency: v.currency } : {}),
      imported_at: v.imported_at.toISOString(),
    })),
  }
}
