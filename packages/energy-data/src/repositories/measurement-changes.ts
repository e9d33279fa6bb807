import { notifyChange } from '@campus/shared'
import type pg from 'pg'

/**
 * What an import or a seed tells every instance when it commits: which 15-minute tables it
 * wrote and over which instants, so that cached answers of those windows are dropped
 * (`export/window-cache.ts`).
 */
export const MEASUREMENTS_CHANNEL = 'energy_measurements_changed'

export interface MeasurementsChange {
  tables: string[]
  /** The quarter hours written lie in [fromMs, toMs). */
  fromMs: number
  toMs: number
}

/** Sent in the writer's transaction: PostgreSQL delivers it when (and only if) that commits. */
export async function notifyMeasurementsChanged(client: pg.PoolClient, change: MeasurementsChange): Promise<void> {
  if (change.tables.length === 0 || !(change.toMs > change.fromMs)) return
  await notifyChange(client, MEASUREMENTS_CHANNEL, JSON.stringify(change))
}

/** The change a payload names; undefined when it cannot be read (the listener then drops everything). */
export function decodeMeasurementsChange(payload: string): MeasurementsChange | undefined {
  try {
    const change = JSON.parse(payload) as Partial<MeasurementsChange>
    if (!Array.isArray(change.tables) || typeof change.fromMs !== 'number' || typeof change.toMs !== 'number') {
      return undefined
    }
    return { tables: change.tables.map(String), fromMs: change.fromMs, toMs: change.toMs }
  } catch {
    return undefined
  }
}
