import { request } from 'node:http'
import type { Kysely } from 'kysely'
import type pg from 'pg'
import { seed } from '../../src/commands/seed.ts'
import type { EnergyDatabase } from '../../src/db/schema.ts'

/** A month of the whole estate: /data/meters over every meter is tens of slices. */
export const MONTH = { from: '2025-05-01', to: '2025-06-01' }

export async function seedMonth(pool: pg.Pool): Promise<void> {
  await seed(pool, { ...MONTH, seed: '11' })
}

/** The per-meter series of every meter over the month: many slices, several MB. */
export async function manySlicesTarget(db: Kysely<EnergyDatabase>, format: 'raw' | 'csv', count = 20): Promise<string> {
  const ids = (await db.selectFrom('meters').select('id').orderBy('id').limit(count).execute()).map((m) => m.id)
  const query = new URLSearchParams({
    start_datetime: `${MONTH.from} 00:00:00`,
    end_datetime: '2025-05-31 23:45:00',
    aggregation: '15 m',
    data_format: format,
  })
  for (const id of ids) query.append('ids', String(id))
  return `/data/meters?${query}`
}

export interface Download {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
  /** Whether the body arrived whole (the chunked encoding ended properly). */
  complete: boolean
  error?: string
}

/**
 * A GET read over node:http; `onChunk` may pause the response (a slow reader) and resume it.
 * Resolves in every case, saying whether the body arrived whole.
 */
export function download(
  base: string,
  target: string,
  headers: Record<string, string>,
  onChunk?: (response: import('node:http').IncomingMessage, received: number) => void,
): Promise<Download> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let received = 0
    const req = request(`${base}${target}`, { headers, agent: false }, (response) => {
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        received += chunk.length
        onChunk?.(response, received)
      })
      let error: string | undefined
      response.on('error', (e) => {
        error = e.message
      })
      response.on('close', () => {
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks),
          complete: response.complete,
          ...(error ? { error } : {}),
        })
      })
    })
    req.on('error', (e) =>
      resolve({ status: 0, headers: {}, body: Buffer.alloc(0), complete: false, error: e.message }),
    )
    req.end()
  })
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
